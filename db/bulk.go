package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// maxBatchRows caps the rows of one multi-row statement; beyond a few
// thousand rows longer statements stop paying off.
const maxBatchRows = 4096

// bulk runs multi-row statements on the connection of a gorm transaction,
// bypassing gorm's per-statement callbacks: the hot path of Import.
type bulk struct {
	ctx     context.Context
	conn    gorm.ConnPool
	dialect dialect
	d       *DB
}

func (d *DB) bulk(ctx context.Context, tx *gorm.DB) *bulk {
	return &bulk{ctx: ctx, conn: tx.Statement.ConnPool, dialect: d.dialect, d: d}
}

// batchRows returns how many rows of ncols parameters one statement takes.
func (b *bulk) batchRows(ncols int) int {
	return min(b.dialect.maxParams()/ncols, maxBatchRows)
}

// insertSQL returns "INSERT INTO table (cols) VALUES (...), ... [RETURNING ret]"
// for rows rows.
func (b *bulk) insertSQL(table string, cols []string, rows int, ret string) string {
	var s strings.Builder
	s.Grow(32 + rows*(4+len(cols)*7))
	fmt.Fprintf(&s, "INSERT INTO %s (%s) VALUES ", table, strings.Join(cols, ", "))
	n := 0
	for r := 0; r < rows; r++ {
		if r > 0 {
			s.WriteByte(',')
		}
		s.WriteByte('(')
		for c := range cols {
			if c > 0 {
				s.WriteByte(',')
			}
			n++
			b.dialect.placeholder(&s, n)
		}
		s.WriteByte(')')
	}
	if ret != "" {
		s.WriteString(" RETURNING ")
		s.WriteString(ret)
	}
	return s.String()
}

// column is a column of a bulk insert with its PostgreSQL type (bigint,
// text or double precision), which fixes the Go type its values have:
// int64, string or float64.
type column struct{ name, pg string }

func columnNames(cols []column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return names
}

// insert writes n rows into table in batches; fill writes row i's values
// into dst (len(cols) long). When ret names columns, scan is called for
// every returned row. after, when set, is called with the number of rows
// written after each batch. SQLite gets multi-row INSERT ... VALUES
// statements (prepared once per batch size, within the bind-parameter
// limit); PostgreSQL gets INSERT ... SELECT FROM unnest(arrays), one array
// parameter per column, which it parses and binds far faster than tens of
// thousands of scalar parameters.
func (b *bulk) insert(table string, cols []column, n int, fill func(i int, dst []any), ret string, scan func(*sql.Rows) error, after func(done int)) error {
	if n == 0 {
		return nil
	}
	if b.dialect == postgresDialect {
		return b.insertUnnest(table, cols, n, fill, ret, scan, after)
	}
	names := columnNames(cols)
	per := b.batchRows(len(cols))
	args := make([]any, min(per, n)*len(cols))
	var full *sql.Stmt
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	for start := 0; start < n; start += per {
		if err := b.ctx.Err(); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
		rows := min(per, n-start)
		a := args[:rows*len(cols)]
		for r := 0; r < rows; r++ {
			fill(start+r, a[r*len(cols):(r+1)*len(cols)])
		}
		var err error
		if rows == per {
			if full == nil {
				if full, err = b.conn.PrepareContext(b.ctx, b.insertSQL(table, names, rows, ret)); err != nil {
					return fmt.Errorf("prepare insert into %s: %w", table, b.d.translate(err))
				}
			}
			err = b.run(full, "", a, ret != "", scan)
		} else {
			err = b.run(nil, b.insertSQL(table, names, rows, ret), a, ret != "", scan)
		}
		if err != nil {
			if cerr := b.ctx.Err(); cerr != nil {
				err = cerr // the transaction was closed because of it
			}
			return fmt.Errorf("insert into %s: %w", table, b.d.translate(err))
		}
		if after != nil {
			after(start + rows)
		}
	}
	return nil
}

// unnestRows is the batch size of PostgreSQL bulk inserts.
const unnestRows = 20000

func (b *bulk) insertUnnest(table string, cols []column, n int, fill func(i int, dst []any), ret string, scan func(*sql.Rows) error, after func(done int)) error {
	var q strings.Builder
	fmt.Fprintf(&q, "INSERT INTO %s (%s) SELECT * FROM unnest(", table, strings.Join(columnNames(cols), ", "))
	for c, col := range cols {
		if c > 0 {
			q.WriteString(", ")
		}
		fmt.Fprintf(&q, "$%d::%s[]", c+1, col.pg)
	}
	q.WriteString(")")
	if ret != "" {
		q.WriteString(" RETURNING " + ret)
	}
	row := make([]any, len(cols))
	ints := make([][]int64, len(cols))
	strs := make([][]string, len(cols))
	floats := make([][]float64, len(cols))
	args := make([]any, len(cols))
	for start := 0; start < n; start += unnestRows {
		if err := b.ctx.Err(); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
		rows := min(unnestRows, n-start)
		for c := range cols {
			ints[c], strs[c], floats[c] = ints[c][:0], strs[c][:0], floats[c][:0]
		}
		for r := 0; r < rows; r++ {
			fill(start+r, row)
			for c, v := range row {
				switch v := v.(type) {
				case int64:
					ints[c] = append(ints[c], v)
				case string:
					strs[c] = append(strs[c], v)
				case float64:
					floats[c] = append(floats[c], v)
				default:
					panic(fmt.Sprintf("db: bulk insert into %s: column %s holds a %T", table, cols[c].name, v))
				}
			}
		}
		for c, col := range cols {
			switch col.pg {
			case "bigint":
				args[c] = ints[c]
			case "double precision":
				args[c] = floats[c]
			default:
				args[c] = strs[c]
			}
		}
		if err := b.run(nil, q.String(), args, ret != "", scan); err != nil {
			if cerr := b.ctx.Err(); cerr != nil {
				err = cerr
			}
			return fmt.Errorf("insert into %s: %w", table, b.d.translate(err))
		}
		if after != nil {
			after(start + rows)
		}
	}
	return nil
}

// run executes a prepared statement or query text, scanning returned rows
// when query is set.
func (b *bulk) run(stmt *sql.Stmt, text string, args []any, query bool, scan func(*sql.Rows) error) error {
	if !query {
		var err error
		if stmt != nil {
			_, err = stmt.ExecContext(b.ctx, args...)
		} else {
			_, err = b.conn.ExecContext(b.ctx, text, args...)
		}
		return err
	}
	var rows *sql.Rows
	var err error
	if stmt != nil {
		rows, err = stmt.QueryContext(b.ctx, args...)
	} else {
		rows, err = b.conn.QueryContext(b.ctx, text, args...)
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// queryIn runs "prefix (?, ?, ...)" for the ids in batches and scans every
// returned row.
func (b *bulk) queryIn(prefix string, ids []int64, scan func(*sql.Rows) error) error {
	per := min(b.dialect.maxParams(), maxBatchRows)
	args := make([]any, 0, min(per, len(ids)))
	for start := 0; start < len(ids); start += per {
		chunk := ids[start:min(start+per, len(ids))]
		var s strings.Builder
		s.WriteString(prefix)
		s.WriteString(" (")
		args = args[:0]
		for i, id := range chunk {
			if i > 0 {
				s.WriteByte(',')
			}
			b.dialect.placeholder(&s, i+1)
			args = append(args, id)
		}
		s.WriteString(")")
		if err := b.run(nil, s.String(), args, true, scan); err != nil {
			return b.d.translate(err)
		}
	}
	return nil
}

// updateFromValues runs, in batches of n rows,
//
//	UPDATE table SET set FROM (VALUES (...), ...) AS v WHERE where
//
// where the VALUES columns are v.column1, v.column2, ... (their default
// names in both SQLite and PostgreSQL); pgTypes gives each column's
// PostgreSQL type, which bind parameters in VALUES need there.
func (b *bulk) updateFromValues(table, set, where string, pgTypes []string, n int, fill func(i int, dst []any)) error {
	ncols := len(pgTypes)
	per := b.batchRows(ncols)
	args := make([]any, min(per, n)*ncols)
	for start := 0; start < n; start += per {
		rows := min(per, n-start)
		var s strings.Builder
		fmt.Fprintf(&s, "UPDATE %s SET %s FROM (VALUES ", table, set)
		p := 0
		for r := 0; r < rows; r++ {
			if r > 0 {
				s.WriteByte(',')
			}
			s.WriteByte('(')
			for c := 0; c < ncols; c++ {
				if c > 0 {
					s.WriteByte(',')
				}
				p++
				b.dialect.placeholder(&s, p)
				if b.dialect == postgresDialect {
					s.WriteString("::")
					s.WriteString(pgTypes[c])
				}
			}
			s.WriteByte(')')
		}
		fmt.Fprintf(&s, ") AS v WHERE %s", where)
		a := args[:rows*ncols]
		for r := 0; r < rows; r++ {
			fill(start+r, a[r*ncols:(r+1)*ncols])
		}
		if _, err := b.conn.ExecContext(b.ctx, s.String(), a...); err != nil {
			if cerr := b.ctx.Err(); cerr != nil {
				err = cerr
			}
			return b.d.translate(err)
		}
	}
	return nil
}
