#!/usr/bin/python3
"""Writes outbox events from Python through the SQL function the migrations
install, inside the caller's own transaction, with Debian's python3-psycopg2.

As a library:   publish(cursor, "order.placed", {"order": 17})   # then commit
As a program:   OUTBOX_DATABASE_URL=... outbox_producer.py --event-type T
                    [--payload JSON] [--count N] [--key K] [--function NAME]
                (or --database-url-file PATH)
"""
import argparse
import json
import sys

import psycopg2
from psycopg2 import sql

from outbox_urls import resolve_url


def publish(cursor, event_type, payload, key=None, ttl_seconds=None,
            headers=None, function="outbox_publish"):
    """Adds one event in the cursor's transaction; returns its id. Bad input
    raises psycopg2.Error with SQLSTATE OB001 and rolls back the caller's
    transaction with it."""
    cursor.execute(
        sql.SQL("SELECT {}(%s, %s, %s, %s, %s)").format(sql.Identifier(function)),
        (event_type, json.dumps(payload), key, ttl_seconds,
         json.dumps(headers) if headers is not None else None))
    return cursor.fetchone()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="only without a password "
                        "(default: $OUTBOX_DATABASE_URL)")
    parser.add_argument("--database-url-file", metavar="PATH",
                        help="a file holding the libpq URL or DSN")
    parser.add_argument("--event-type", required=True)
    parser.add_argument("--payload", default="{}", help="a JSON value")
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--key")
    parser.add_argument("--function", default="outbox_publish")
    args = parser.parse_args()
    try:
        payload = json.loads(args.payload)
    except ValueError:
        sys.exit("outbox_producer: --payload is not valid JSON")
    url = resolve_url("outbox_producer", "database-url", args.database_url,
                      args.database_url_file, "OUTBOX_DATABASE_URL")
    try:
        conn = psycopg2.connect(url)
    except psycopg2.Error as e:  # its text may quote the DSN
        sys.exit(f"outbox_producer: cannot connect to the database ({type(e).__name__})")
    try:
        for _ in range(args.count):
            with conn:  # one transaction per event, as a business write would be
                with conn.cursor() as cur:
                    publish(cur, args.event_type, payload, args.key,
                            function=args.function)
    except psycopg2.Error as e:
        sys.exit(f"outbox_producer: the database refused the event (SQLSTATE {e.pgcode})")
    finally:
        conn.close()
    print(f"published {args.count} event(s) of type {args.event_type}")


if __name__ == "__main__":
    main()
