package main

import (
	"bufio"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// scrape reads one sample of the daemon's /metrics by its series, as
// written in the text format; -1 when absent.
func scrape(t *testing.T, d *daemon, series string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	d.metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return f
		}
	}
	return -1
}
