-- RFC 7396 JSON merge patch, used by the router to coalesce deliveries of a
-- key whose route says "merge": "json-merge".

CREATE FUNCTION {{events}}_merge_patch(target jsonb, patch jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  k text;
  v jsonb;
  result jsonb;
BEGIN
  IF patch IS NULL OR jsonb_typeof(patch) <> 'object' THEN
    RETURN patch;
  END IF;
  result := CASE WHEN jsonb_typeof(target) = 'object' THEN target ELSE '{}'::jsonb END;
  FOR k, v IN SELECT * FROM jsonb_each(patch) LOOP
    IF jsonb_typeof(v) = 'null' THEN
      result := result - k;
    ELSE
      result := jsonb_set(result, ARRAY[k], {{events}}_merge_patch(result -> k, v));
    END IF;
  END LOOP;
  RETURN result;
END
$$;

-- Folds payloads oldest first: merge_patch(merge_patch(p1, p2), p3) ...
CREATE AGGREGATE {{events}}_merge_patch_agg(jsonb) (
  SFUNC = {{events}}_merge_patch,
  STYPE = jsonb
);
