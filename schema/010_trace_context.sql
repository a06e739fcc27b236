-- Event headers that the wire carries (docs/design.md "Wire contract",
-- "Headers"): no name the contract reserves, and a W3C Trace Context
-- (traceparent, tracestate) that keeps its rules. The rules are those of
-- core/domain/event_headers.cpp and trace_context.cpp, which the C++
-- producer API checks before it calls the publish function: change them
-- together. A trigger rather than a new copy of the publish function: the
-- rule is in one place whatever inserts the row, and an insert without
-- headers (the WHEN clause) costs nothing. Errors name the rule and never
-- quote the value.

CREATE FUNCTION {{publish_function}}_check_headers() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v_tp text;
  v_ts text;
  v_member text;
  v_members int := 0;
BEGIN
  IF jsonb_typeof(NEW.headers) <> 'object' THEN
    RETURN NEW; -- the publish function refuses it; nothing else to check
  END IF;
  -- Names folded as in C++: ASCII lowercase, without '_' and '-'.
  IF EXISTS (SELECT 1 FROM (
               SELECT translate(k, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
                                'abcdefghijklmnopqrstuvwxyz') AS l
               FROM jsonb_object_keys(NEW.headers) k) n
             WHERE l LIKE 'x-%'
                OR translate(l, '_-', '') LIKE 'outbox%'
                OR translate(l, '_-', '') IN (
                     'cc', 'bcc', 'contenttype', 'contentencoding',
                     'deliverymode', 'priority', 'correlationid', 'replyto',
                     'expiration', 'messageid', 'timestamp', 'type', 'userid',
                     'appid', 'clusterid', 'job', 'eventtype', 'payload')) THEN
    RAISE EXCEPTION '{{publish_function}}: headers: a name is reserved by the wire contract (outbox*, x-*, cc, bcc, the AMQP properties, job, eventType, payload)'
      USING ERRCODE = 'OB001';
  END IF;
  IF EXISTS (SELECT 1 FROM jsonb_object_keys(NEW.headers) k
             WHERE translate(k, 'ACENPRST', 'acenprst') IN ('traceparent', 'tracestate')
               AND k NOT IN ('traceparent', 'tracestate')) THEN
    RAISE EXCEPTION '{{publish_function}}: headers: traceparent and tracestate must be spelled in lowercase'
      USING ERRCODE = 'OB001';
  END IF;
  v_tp := NEW.headers ->> 'traceparent';
  IF v_tp IS NOT NULL THEN
    -- Version 00 is exactly 55 characters; a later one (not ff) may go on
    -- after a dash.
    IF v_tp !~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$'
       OR left(v_tp, 2) = 'ff'
       OR (left(v_tp, 2) = '00' AND length(v_tp) <> 55) THEN
      RAISE EXCEPTION '{{publish_function}}: headers: traceparent: must be W3C version-traceid-parentid-flags (00-<32 hex>-<16 hex>-<2 hex>), lowercase hex'
        USING ERRCODE = 'OB001';
    END IF;
    IF substr(v_tp, 4, 32) = repeat('0', 32) THEN
      RAISE EXCEPTION '{{publish_function}}: headers: traceparent: the trace id must not be all zeros'
        USING ERRCODE = 'OB001';
    END IF;
    IF substr(v_tp, 37, 16) = repeat('0', 16) THEN
      RAISE EXCEPTION '{{publish_function}}: headers: traceparent: the parent id must not be all zeros'
        USING ERRCODE = 'OB001';
    END IF;
  END IF;
  v_ts := NEW.headers ->> 'tracestate';
  IF v_ts IS NOT NULL THEN
    IF octet_length(v_ts) > 512 THEN
      RAISE EXCEPTION '{{publish_function}}: headers: tracestate: must have at most 512 bytes'
        USING ERRCODE = 'OB001';
    END IF;
    FOREACH v_member IN ARRAY string_to_array(v_ts, ',') LOOP
      v_member := btrim(v_member, E' \t');
      CONTINUE WHEN v_member = ''; -- W3C allows empty list members
      v_members := v_members + 1;
      IF v_members > 32 THEN
        RAISE EXCEPTION '{{publish_function}}: headers: tracestate: must have at most 32 list members'
          USING ERRCODE = 'OB001';
      END IF;
      -- key = simple-key / tenant-id "@" system-id; value = 1..256
      -- printable ASCII but ',' and '=', not ending in a space.
      IF v_member !~ ('^([a-z][a-z0-9_*/-]{0,255}|[a-z0-9][a-z0-9_*/-]{0,240}@[a-z][a-z0-9_*/-]{0,13})'
                      || '=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$') THEN
        RAISE EXCEPTION '{{publish_function}}: headers: tracestate: list members must be W3C key=value (lowercase key, printable ASCII value)'
          USING ERRCODE = 'OB001';
      END IF;
    END LOOP;
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER {{events}}_check_headers_trg
  BEFORE INSERT ON {{events}}
  FOR EACH ROW WHEN (NEW.headers IS NOT NULL)
  EXECUTE FUNCTION {{publish_function}}_check_headers();
