package annotations

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"
)

// readZipLabels reads a ZIP archive: an XLSX workbook, or an archive of
// label files (doccano exports one JSONL file per annotator, named after
// them, zipped together). Each file of such an archive is read as a label
// file of its own (format want, detected when auto), named ARCHIVE/FILE in
// problems, with the rater of records that name none taken from opts.Rater
// or the file's name; their labels and items are put together.
func readZipLabels(br *bufio.Reader, opts ReadOptions, c *collector, want Format) (*Parsed, error) {
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, err
	}
	zr, zerr := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if zerr != nil || isWorkbook(zr) || want == FormatCSVLong || want == FormatCSVWide || want == FormatXLSX {
		return readXLSXLabels(bufio.NewReader(bytes.NewReader(data)), opts, c, want)
	}
	limit := xlsxUnzipLimit(len(data))
	var total int64
	var members []*zip.File
	for _, zf := range zr.File {
		base := path.Base(zf.Name)
		if strings.HasSuffix(zf.Name, "/") || strings.HasPrefix(zf.Name, "__MACOSX/") || strings.HasPrefix(base, ".") {
			continue
		}
		members = append(members, zf)
	}
	if len(members) == 0 {
		c.add(Problem{Msg: "the ZIP archive holds no files (expected label files, such as doccano's one JSONL file per annotator)"})
		return c.result()
	}
	out := c.parsed
	out.Format = ""
	for _, zf := range members {
		name := zf.Name
		if opts.Name != "" {
			name = opts.Name + "/" + zf.Name
		}
		rc, err := zf.Open()
		if err != nil {
			c.add(Problem{Msg: fmt.Sprintf("cannot read %s from the ZIP archive: %v", zf.Name, err)})
			continue
		}
		b, err := io.ReadAll(io.LimitReader(rc, limit-total+1))
		rc.Close()
		if err != nil {
			c.add(Problem{Msg: fmt.Sprintf("cannot read %s from the ZIP archive: %v", zf.Name, err)})
			continue
		}
		total += int64(len(b))
		if total > limit {
			c.add(Problem{Msg: fmt.Sprintf("the ZIP archive unpacks to more than %d MB, the limit for its size: refused as a possible ZIP bomb; unzip it and import the files", limit>>20)})
			return c.result()
		}
		if bytes.HasPrefix(b, magicZip) {
			c.add(Problem{Msg: fmt.Sprintf("%s: a ZIP archive inside the ZIP archive; unzip it and import the files", name)})
			continue
		}
		mo := opts
		mo.Name = name
		mo.Format = want
		p, err := ReadLabels(bytes.NewReader(b), mo)
		if err != nil {
			pl, ok := err.(*ProblemList)
			if !ok {
				return nil, err
			}
			for _, pr := range pl.Problems {
				c.problems.Add(pr) // already named after the member
			}
			c.problems.Omitted += pl.Omitted
			continue
		}
		mergeParsed(out, p)
	}
	if err := c.problems.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// mergeParsed adds the labels, items and unused columns of p to dst; dst's
// format is the common format, or p's when dst has none.
func mergeParsed(dst, p *Parsed) {
	if dst.Format == "" {
		dst.Format = p.Format
	}
	dst.Labels = append(dst.Labels, p.Labels...)
	dst.Items = append(dst.Items, p.Items...)
	for _, u := range p.Unused {
		found := false
		for _, v := range dst.Unused {
			if u == v {
				found = true
				break
			}
		}
		if !found {
			dst.Unused = append(dst.Unused, u)
		}
	}
}

// isWorkbook reports whether an archive holds an XLSX workbook part.
func isWorkbook(zr *zip.Reader) bool {
	for _, zf := range zr.File {
		n := strings.ToLower(zf.Name)
		if n == "xl/workbook.xml" || strings.HasSuffix(n, "/workbook.xml") || strings.HasSuffix(n, "/workbook.bin") || n == "[content_types].xml" {
			return true
		}
	}
	return false
}
