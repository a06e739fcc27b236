-- The publish function with the limits of every argument, so that no event
-- it accepts can stop a later stage: a key too long for the coalescing
-- index stopped every routing pass; an 'infinity' expiry stopped every
-- claim of its queue; a year after 2262 broke the relay's time arithmetic;
-- a number like 1e400 (a PostgreSQL numeric, no double) no worker could
-- parse. The numbers are those of core/domain/event_limits.hpp, which the C++
-- producer API checks before it calls this function (and direct publish,
-- which never reaches SQL): change them together. Errors name the rule and
-- never quote the value.

CREATE OR REPLACE FUNCTION {{publish_function}}(
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
  v_payload jsonb;
  v_id bigint;
BEGIN
  IF p_event_type IS NULL OR btrim(p_event_type) = '' THEN
    RAISE EXCEPTION '{{publish_function}}: event_type must be a non-empty text'
      USING ERRCODE = 'OB001';
  END IF;
  -- limits::max_event_type_bytes
  IF octet_length(p_event_type) > 255 THEN
    RAISE EXCEPTION '{{publish_function}}: event_type: must have 1 to 255 bytes, not all blank'
      USING ERRCODE = 'OB001';
  END IF;
  IF p_event_type ~ '[\x01-\x1f\x7f]' THEN
    RAISE EXCEPTION '{{publish_function}}: event_type: must not contain control characters'
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
  -- limits::max_payload_bytes
  IF octet_length(p_payload) > 8388608 THEN
    RAISE EXCEPTION '{{publish_function}}: payload: must have at most 8388608 bytes (8 MiB)'
      USING ERRCODE = 'OB001';
  END IF;
  IF p_content_type = 'application/json' THEN
    BEGIN
      v_payload := p_payload::jsonb;
    EXCEPTION
      WHEN untranslatable_character THEN -- 22P05: \u0000
        RAISE EXCEPTION '{{publish_function}}: payload: JSON strings must not contain \u0000 (the database''s text cannot hold NUL)'
          USING ERRCODE = 'OB001';
      WHEN statement_too_complex THEN -- 54001: the parser's stack ran out
        RAISE EXCEPTION '{{publish_function}}: payload: JSON nesting must be at most 64 deep'
          USING ERRCODE = 'OB001';
      WHEN others THEN -- also a number of more than 16383 decimal places,
                       -- which numeric cannot hold (event_limits.cpp says so)
        RAISE EXCEPTION '{{publish_function}}: payload is not valid JSON'
          USING ERRCODE = 'OB001';
    END;
    -- limits::max_json_depth: a container 64 levels below the root is the
    -- 65th nested one.
    IF jsonb_path_exists(v_payload,
         'strict $.**{64 to last} ? (@.type() == "array" || @.type() == "object")') THEN
      RAISE EXCEPTION '{{publish_function}}: payload: JSON nesting must be at most 64 deep'
        USING ERRCODE = 'OB001';
    END IF;
    -- limits::max_json_number: what an IEEE double holds (RapidJSON, as
    -- the workers use it, refuses anything larger).
    IF jsonb_path_exists(v_payload,
         'strict $.** ? (@.type() == "number" && (@ > 1.7976931348623157e308 || @ < -1.7976931348623157e308))') THEN
      RAISE EXCEPTION '{{publish_function}}: payload: JSON numbers must be within +-1.7976931348623157e308 (a double)'
        USING ERRCODE = 'OB001';
    END IF;
  END IF;
  IF p_key IS NOT NULL AND p_key = '' THEN
    RAISE EXCEPTION '{{publish_function}}: key must be NULL or a non-empty text'
      USING ERRCODE = 'OB001';
  END IF;
  -- limits::max_key_bytes
  IF octet_length(p_key) > 1024 THEN
    RAISE EXCEPTION '{{publish_function}}: key: must have at most 1024 bytes'
      USING ERRCODE = 'OB001';
  END IF;
  IF p_key ~ '[\x01-\x1f\x7f]' THEN
    RAISE EXCEPTION '{{publish_function}}: key: must not contain control characters'
      USING ERRCODE = 'OB001';
  END IF;
  IF p_ttl_seconds IS NOT NULL AND p_ttl_seconds < 0 THEN
    RAISE EXCEPTION '{{publish_function}}: ttl_seconds must be >= 0 (0 or NULL: never expires)'
      USING ERRCODE = 'OB001';
  END IF;
  -- limits::max_ttl_seconds
  IF p_ttl_seconds > 3153600000 THEN
    RAISE EXCEPTION '{{publish_function}}: ttl_seconds: must be at most 3153600000 (100 years)'
      USING ERRCODE = 'OB001';
  END IF;
  -- limits::min_expires_at_unix, end_expires_at_unix ('infinity' and
  -- '-infinity' fall outside too)
  IF p_expires_at IS NOT NULL AND NOT (p_expires_at >= '1970-01-01T00:00:00Z'
                                       AND p_expires_at < '2200-01-01T00:00:00Z') THEN
    RAISE EXCEPTION '{{publish_function}}: expires_at: must be from 1970-01-01 to before 2200-01-01'
      USING ERRCODE = 'OB001';
  END IF;
  IF p_headers IS NOT NULL AND jsonb_typeof(p_headers) <> 'object' THEN
    RAISE EXCEPTION '{{publish_function}}: headers must be a JSON object'
      USING ERRCODE = 'OB001';
  END IF;
  IF p_headers IS NOT NULL THEN
    -- limits::max_headers, max_header_name_bytes, max_header_value_bytes
    IF (SELECT count(*) FROM jsonb_object_keys(p_headers)) > 64 THEN
      RAISE EXCEPTION '{{publish_function}}: headers: at most 64'
        USING ERRCODE = 'OB001';
    END IF;
    IF EXISTS (SELECT 1 FROM jsonb_object_keys(p_headers) k
               WHERE octet_length(k) NOT BETWEEN 1 AND 128) THEN
      RAISE EXCEPTION '{{publish_function}}: headers: names must have 1 to 128 bytes'
        USING ERRCODE = 'OB001';
    END IF;
    IF EXISTS (SELECT 1 FROM jsonb_each(p_headers) h
               WHERE jsonb_typeof(h.value) <> 'string'
                  OR octet_length(h.value #>> '{}') > 4096) THEN
      RAISE EXCEPTION '{{publish_function}}: headers: values must be strings of at most 4096 bytes'
        USING ERRCODE = 'OB001';
    END IF;
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
