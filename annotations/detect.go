package annotations

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// sniffSize is how much of a file is looked at to detect its format.
const sniffSize = 64 << 10

// contentKind is what the first bytes of a file say it is.
type contentKind int

const (
	kindText      contentKind = iota // CSV or TSV
	kindEmpty                        // nothing but white space
	kindBad                          // a problem was recorded (wrong encoding, binary)
	kindZip                          // a ZIP archive: XLSX
	kindJSONArray                    // starts with '['
	kindJSONLines                    // starts with '{'
)

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
	magicZip   = []byte("PK\x03\x04")
	magicOLE   = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}
)

// sniff looks at the start of br, drops a UTF-8 byte-order mark, and says
// what kind of content follows. Encoding problems (UTF-16, binary data) are
// recorded in c and reported as kindBad. The error is an I/O error.
func sniff(br *bufio.Reader, c *collector) (contentKind, error) {
	head, err := br.Peek(sniffSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return kindBad, err
	}
	switch {
	case bytes.HasPrefix(head, bomUTF8):
		if _, err := br.Discard(len(bomUTF8)); err != nil {
			return kindBad, err
		}
		head = head[len(bomUTF8):]
	case bytes.HasPrefix(head, bomUTF16LE), bytes.HasPrefix(head, bomUTF16BE):
		c.add(Problem{Msg: "file is UTF-16 encoded; save it as UTF-8"})
		return kindBad, nil
	case bytes.HasPrefix(head, magicZip):
		return kindZip, nil
	case bytes.HasPrefix(head, magicOLE):
		c.add(Problem{Msg: "file is an old Excel (.xls) workbook; save it as .xlsx or as UTF-8 CSV"})
		return kindBad, nil
	}
	if i := bytes.IndexByte(head, 0); i >= 0 {
		if looksUTF16(head) {
			c.add(Problem{Msg: "file is UTF-16 encoded; save it as UTF-8"})
		} else {
			c.add(Problem{Line: 1 + bytes.Count(head[:i], []byte{'\n'}), Msg: "file contains NUL bytes: it is binary, not a UTF-8 text file"})
		}
		return kindBad, nil
	}
	t := bytes.TrimLeft(head, " \t\r\n")
	if len(t) == 0 {
		return kindEmpty, nil
	}
	switch t[0] {
	case '[':
		return kindJSONArray, nil
	case '{':
		return kindJSONLines, nil
	}
	return kindText, nil
}

// looksUTF16 reports whether text without a byte-order mark looks like UTF-16:
// most ASCII characters paired with a zero byte.
func looksUTF16(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	n := len(b) &^ 1
	zeroEven, zeroOdd := 0, 0
	for i := 0; i < n; i += 2 {
		if b[i] == 0 {
			zeroEven++
		}
		if b[i+1] == 0 {
			zeroOdd++
		}
	}
	half := n / 2
	return zeroEven > half*3/4 || zeroOdd > half*3/4
}

// sniffDelimiter picks the CSV delimiter from the first line of head: the
// most frequent of comma, tab and semicolon outside double quotes (comma when
// none occurs or on a tie with it).
func sniffDelimiter(head []byte) rune {
	var comma, tab, semi int
	inQuote := false
	for _, b := range head {
		if b == '"' {
			inQuote = !inQuote
			continue
		}
		if inQuote {
			continue
		}
		if b == '\n' {
			break
		}
		switch b {
		case ',':
			comma++
		case '\t':
			tab++
		case ';':
			semi++
		}
	}
	switch {
	case tab > comma && tab >= semi:
		return '\t'
	case semi > comma && semi > tab:
		return ';'
	}
	return ','
}
