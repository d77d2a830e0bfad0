package record

import (
	"context"
	"time"
)

// Clean drops what killed runs of this tool left on a server: replication
// slots named with Prefix that no connection uses (a slot retains WAL until
// the disk fills) and publications named with Prefix whose slot is gone or
// idle, in the database of url. It returns their names.
func Clean(ctx context.Context, url string) (dropped []string, err error) {
	cfg, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	s := &session{sql: c}
	rows, err := c.Query(ctx, `SELECT 'slot ' || slot_name FROM pg_replication_slots WHERE slot_name LIKE 'cutcheck\_%' AND NOT active AND database = current_database()
		UNION ALL SELECT 'publication ' || pubname FROM pg_publication p WHERE pubname LIKE 'cutcheck\_%'
		AND NOT EXISTS (SELECT 1 FROM pg_replication_slots s WHERE s.slot_name = p.pubname AND s.active) ORDER BY 1`)
	if err != nil {
		return nil, s.dbErr(ctx, "listing slots and publications", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, s.dbErr(ctx, "listing slots and publications", err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, s.dbErr(ctx, "listing slots and publications", err)
	}
	for _, n := range names {
		var q string
		var arg []any
		if name, ok := cutPrefix(n, "slot "); ok {
			q, arg = "SELECT pg_drop_replication_slot($1)", []any{name}
		} else {
			name, _ := cutPrefix(n, "publication ")
			q = "DROP PUBLICATION IF EXISTS " + quoteIdent(name)
		}
		if _, err := c.Exec(ctx, q, arg...); err != nil {
			return dropped, s.dbErr(ctx, "dropping "+n, err)
		}
		dropped = append(dropped, n)
	}
	return dropped, nil
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}
