package words

import "testing"

func TestAnd(t *testing.T) {
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{nil, ""},
		{[]string{"--url"}, "--url"},
		{[]string{"-h", "-p"}, "-h and -p"},
		{[]string{"-h", "-p", "-n"}, "-h, -p and -n"},
	} {
		if got := And(tc.words); got != tc.want {
			t.Errorf("And(%q) = %q, want %q", tc.words, got, tc.want)
		}
	}
}

func TestFlag(t *testing.T) {
	for name, want := range map[string]string{"h": "-h", "url": "--url", "read-only": "--read-only"} {
		if got := Flag(name); got != want {
			t.Errorf("Flag(%q) = %q, want %q", name, got, want)
		}
	}
}
