package raters

import (
	"fmt"
	"slices"
)

// enumName is the String method of the enumerations of this package: the
// name of value v in its table names, or typ(v) for a value outside it.
func enumName[E ~int](names []string, v E, typ string) string {
	if v < 0 || int(v) >= len(names) {
		return fmt.Sprintf("%s(%d)", typ, int(v))
	}
	return names[v]
}

// enumValue is the parser of the enumerations of this package: the value
// named s in the table names, and whether there is one.
func enumValue[E ~int](names []string, s string) (E, bool) {
	i := slices.Index(names, s)
	return E(max(i, 0)), i >= 0
}
