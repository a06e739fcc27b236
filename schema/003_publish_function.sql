-- {{publish_function}}(event_type, payload, key, ttl_seconds, headers
--                      [, expires_at, content_type]) adds an event inside the
-- caller's transaction and returns its id. The C++ producer API calls it too,
-- so both check the same rules. Errors use SQLSTATE OB001 and safe messages
-- that never quote the payload.

CREATE FUNCTION {{publish_function}}(
  p_event_type   text,
  p_payload      text,
  p_key          text DEFAULT NULL,
  p_ttl_seconds  bigint DEFAULT NULL,
  p_headers      jsonb DEFAULT NULL,
  p_expires_at   timestamptz DEFAULT NULL,
  p_content_type text DEFAULT 'application/json'
) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_expires timestamptz := p_expires_at;
  v_id bigint;
BEGIN
  IF p_event_type IS NULL OR btrim(p_event_type) = '' THEN
    RAISE EXCEPTION '{{publish_function}}: event_type must be a non-empty text'
      USING ERRCODE = 'OB001';
  END IF;
  IF length(p_event_type) > 255 THEN
    RAISE EXCEPTION '{{publish_function}}: event_type must have at most 255 characters'
      USING ERRCODE = 'OB001';
  END IF;
  IF p_payload IS NULL THEN
    RAISE EXCEPTION '{{publish_function}}: payload must not be NULL'
      USING ERRCODE = 'OB001';
  END IF;
  IF p_content_type IS NULL OR btrim(p_content_type) = '' THEN
    RAISE EXCEPTION '{{publish_function}}: content_type must be a non-empty text'
      USING ERRCODE = 'OB001';
  END IF;
  IF p_content_type = 'application/json' THEN
    BEGIN
      PERFORM p_payload::jsonb;
    EXCEPTION WHEN others THEN
      RAISE EXCEPTION '{{publish_function}}: payload is not valid JSON'
        USING ERRCODE = 'OB001';
    END;
  END IF;
  IF p_key IS NOT NULL AND p_key = '' THEN
    RAISE EXCEPTION '{{publish_function}}: key must be NULL or a non-empty text'
      USING ERRCODE = 'OB001';
  END IF;
  IF p_ttl_seconds IS NOT NULL AND p_ttl_seconds < 0 THEN
    RAISE EXCEPTION '{{publish_function}}: ttl_seconds must be >= 0 (0 or NULL: never expires)'
      USING ERRCODE = 'OB001';
  END IF;
  IF p_headers IS NOT NULL AND jsonb_typeof(p_headers) <> 'object' THEN
    RAISE EXCEPTION '{{publish_function}}: headers must be a JSON object'
      USING ERRCODE = 'OB001';
  END IF;
  IF p_ttl_seconds > 0 THEN
    -- The earlier of the event's own expiry and its TTL wins.
    v_expires := LEAST(v_expires, now() + make_interval(secs => p_ttl_seconds));
  END IF;
  INSERT INTO {{events}} (event_type, payload, content_type, key, expires_at, headers)
  VALUES (p_event_type, p_payload, p_content_type, p_key, v_expires, p_headers)
  RETURNING id INTO v_id;
  RETURN v_id;
END
$$;
