package testutil

import (
	"crypto/rand"
	"os"
	"strings"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// PostgresSchema returns the DSN of a fresh PostgreSQL schema named from
// prefix (dropped when the test ends) on the server of
// CONCORD_TEST_POSTGRES_DSN (start one with db/testdata/start-postgres.sh),
// or "" when that is not set; with CONCORD_REQUIRE_POSTGRES=1 an unset DSN
// fails the test instead.
func PostgresSchema(t testing.TB, prefix string) string {
	t.Helper()
	base := os.Getenv("CONCORD_TEST_POSTGRES_DSN")
	if base == "" {
		if os.Getenv("CONCORD_REQUIRE_POSTGRES") == "1" {
			t.Fatal("CONCORD_REQUIRE_POSTGRES=1 but CONCORD_TEST_POSTGRES_DSN is not set (start a server with db/testdata/start-postgres.sh)")
		}
		return ""
	}
	admin, err := gorm.Open(postgres.Open(base), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	sqlDB, _ := admin.DB()
	t.Cleanup(func() { sqlDB.Close() })
	name := prefix + strings.ToLower(rand.Text()[:12])
	if err := admin.Exec("CREATE SCHEMA " + name).Error; err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() { admin.Exec("DROP SCHEMA " + name + " CASCADE") })
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + name
}
