package record

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
)

// preflight checks, before anything is created, what would make the run
// fail later or harm the application: privileges, a replica identity that
// makes the table's UPDATE and DELETE fail once it is published, a
// signalling table in a schema that does not exist. It returns the
// publication's WITH clause.
func (s *session) preflight(ctx context.Context) (with string, err error) {
	var version int
	var partitioned, owner, canSelect, canWrite bool
	err = s.sql.QueryRow(ctx, `SELECT current_setting('server_version_num')::int, c.relkind = 'p', pg_has_role(c.relowner, 'USAGE'),
		has_table_privilege(c.oid, 'SELECT'), has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE')
		FROM pg_class c WHERE c.oid = $1::regclass`, s.tab.qname).Scan(&version, &partitioned, &owner, &canSelect, &canWrite)
	if err != nil {
		return "", s.dbErr(ctx, "checking the table", err)
	}
	user := s.cfg.User
	switch {
	case !canSelect:
		return "", usageErr("user %s lacks the SELECT privilege on table %s, which the chunk reads need: GRANT SELECT ON %s TO %s", user, s.tab.qname, s.tab.qname, user)
	case !owner:
		return "", usageErr("user %s does not own table %s, which creating a publication for it needs: run record as its owner", user, s.tab.qname)
	case s.opt.Workload.Rate != 0 && !canWrite:
		return "", usageErr("user %s lacks the INSERT, UPDATE or DELETE privilege on table %s, which the workload needs", user, s.tab.qname)
	case partitioned && version < 130000:
		return "", usageErr("table %s is partitioned, and the server (version %d) cannot publish a partitioned table's changes under its own name (PostgreSQL 13 can)", s.tab.qname, version/10000)
	}
	if err := s.checkIdentity(ctx); err != nil {
		return "", err
	}
	if version >= 130000 {
		// A partition's changes come under the root's name, the table the
		// chunks read.
		with = " WITH (publish_via_partition_root = true)"
	}
	return with, nil
}

// checkRole checks, before anything is created (--populate's table
// included), what the run needs of the user and the signalling table.
func (s *session) checkRole(ctx context.Context) error {
	var replication, createDB bool
	err := s.sql.QueryRow(ctx, `SELECT (SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user),
		has_database_privilege(current_database(), 'CREATE')`).Scan(&replication, &createDB)
	user := s.cfg.User
	switch {
	case err != nil:
		return s.dbErr(ctx, "checking the user's privileges", err)
	case !replication:
		return usageErr("user %s lacks the REPLICATION attribute, which a replication slot needs: ALTER ROLE %s REPLICATION", user, user)
	case !createDB:
		return usageErr("user %s lacks the CREATE privilege on database %s, which a publication needs: GRANT CREATE ON DATABASE %s TO %s", user, s.cfg.Database, s.cfg.Database, user)
	}
	return s.checkSignalSchema(ctx)
}

// checkIdentity refuses REPLICA IDENTITY NOTHING on the table or any of
// its partitions or children: once published, their UPDATE and DELETE fail.
func (s *session) checkIdentity(ctx context.Context) error {
	var name string
	err := s.sql.QueryRow(ctx, `SELECT c.oid::regclass::text FROM pg_class c
		WHERE c.oid IN (SELECT $1::regclass UNION SELECT relid FROM pg_partition_tree($1::regclass)
			UNION SELECT inhrelid FROM pg_inherits WHERE inhparent = $1::regclass)
		AND c.relreplident = 'n' ORDER BY 1 LIMIT 1`, s.tab.qname).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return s.dbErr(ctx, "checking the replica identity", err)
	}
	return usageErr("table %s has REPLICA IDENTITY NOTHING: once published, its UPDATE and DELETE would fail; ALTER TABLE %s REPLICA IDENTITY DEFAULT (or FULL) first", name, name)
}

// checkSignalSchema refuses a signalling table in a schema that does not
// exist, and one the user cannot create or write.
func (s *session) checkSignalSchema(ctx context.Context) error {
	q := quoteQualified(s.opt.SignalTable)
	var exists, write bool
	err := s.sql.QueryRow(ctx, `SELECT true, has_table_privilege(c.oid, 'SELECT, INSERT, DELETE') FROM pg_class c WHERE c.oid = to_regclass($1)`, q).Scan(&exists, &write)
	switch {
	case err == nil && !write:
		return usageErr("user %s lacks the SELECT, INSERT or DELETE privilege on the signalling table %s: GRANT SELECT, INSERT, DELETE ON %s TO %s", s.cfg.User, s.opt.SignalTable, s.opt.SignalTable, s.cfg.User)
	case err == nil:
		return nil
	case !errors.Is(err, pgx.ErrNoRows):
		return s.dbErr(ctx, "looking up the signalling table", err)
	}
	schema := "current_schema()"
	args := []any{}
	if i := strings.IndexByte(s.opt.SignalTable, '.'); i >= 0 {
		schema, args = "$1", []any{s.opt.SignalTable[:i]}
	}
	var name *string
	var create bool
	err = s.sql.QueryRow(ctx, `SELECT n.nspname, COALESCE(has_schema_privilege(n.oid, 'CREATE'), false) FROM (SELECT `+schema+` AS s) x
		LEFT JOIN pg_namespace n ON n.nspname = x.s`, args...).Scan(&name, &create)
	switch {
	case err != nil:
		return s.dbErr(ctx, "looking up the signalling table's schema", err)
	case name == nil:
		return usageErr("--signal-table %s: schema %s does not exist", s.opt.SignalTable, strings.TrimSuffix(s.opt.SignalTable, "."+lastPart(s.opt.SignalTable)))
	case !create:
		return usageErr("user %s lacks the CREATE privilege on schema %s, which creating the signalling table %s needs", s.cfg.User, *name, s.opt.SignalTable)
	}
	return nil
}

func lastPart(name string) string {
	if i := strings.IndexByte(name, '.'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// dropIfEmpty drops a signalling table record created when no row is left
// in it and no other publication of it exists; it says whether it did.
func dropIfEmpty(ctx context.Context, c *pgx.Conn, qname string) (bool, error) {
	dropped := false
	err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '5s'"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE "+qname+" IN ACCESS EXCLUSIVE MODE"); err != nil {
			return err
		}
		var busy bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+qname+`)
			OR EXISTS (SELECT 1 FROM pg_publication_rel WHERE prrelid = $1::regclass)`, qname).Scan(&busy); err != nil || busy {
			return err
		}
		_, err := tx.Exec(ctx, "DROP TABLE "+qname)
		dropped = err == nil
		return err
	})
	return dropped, err
}
