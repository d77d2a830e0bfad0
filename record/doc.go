// Package record runs a watermark backfill of one table of a real PostgreSQL
// the way Debezium's incremental snapshot runs it, and writes what it saw as
// an evidence bundle (certify/FORMAT.md) and what it emitted as Debezium
// change events.
//
// The capture is window-discard (§6.2 of the main paper, DBLog §3): each chunk
// is bracketed by a low and a high watermark row written to a signalling table
// in their own transactions; the chunk is read between them ((k1, …) > last
// ORDER BY k1, … LIMIT n over the key columns, text COLLATE "C", the maximum
// key fixed when the snapshot starts); the change
// stream, read from a temporary logical replication slot through pgoutput,
// discards a buffered chunk row whose key changes between the watermarks, and
// the survivors are emitted when the high watermark is consumed. Log
// positions are the row changes the slot delivers, in commit order (seed 003
// names a PostgreSQL LSN as one such frontier); the certificate claims every
// key at the last high watermark: the chunks cover the keys up to the
// maximum key, read in the first window, and that read saw none above it.
//
// What a Debezium PostgreSQL connector with a signalling table and the sink
// notification channel would write is written too: the change events of the
// table and of the signalling table (the execute-snapshot row and the window
// rows) and the incremental-snapshot notifications, so that certify --from
// debezium reaches the bundle's verdict from them. Both paths render a row
// from PostgreSQL's own text output, as Debezium's default type mapping
// writes it (render.go).
//
// The table is the oracle (oracle.go): at the end of a backfill the
// recorder reads the whole table between two marker rows and checks that
// the emitted stream agrees with it, so that certify's assumption of a
// faithful observation is checked for the run at hand.
//
// Nothing is left behind: the slot is temporary (the server drops it when the
// replication connection ends, even if the process is killed), and the
// publication, the signal rows and a signalling table the run created are
// removed on every exit, Ctrl-C included. Clean removes what a killed run
// left on the server, CleanFiles its spool files.
package record
