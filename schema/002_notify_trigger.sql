-- Wakes the router: one NOTIFY on the channel {{events}} per inserting
-- statement, delivered by PostgreSQL only when the transaction commits.

CREATE FUNCTION {{events}}_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('{{events}}', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER {{events}}_notify_trg
  AFTER INSERT ON {{events}}
  FOR EACH STATEMENT EXECUTE FUNCTION {{events}}_notify();
