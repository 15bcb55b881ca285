package target

import (
	"strings"
	"testing"
)

func TestSHA512Crypt(t *testing.T) {
	long := strings.Repeat("a", 200)
	tests := []struct {
		name, password, setting, want string
	}{
		// Vectors from Drepper's specification.
		{"spec default rounds", "Hello world!", "$6$saltstring", "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"},
		{"spec rounds=10000", "Hello world!", "$6$rounds=10000$saltstringsaltstring", "$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v."},
		{"spec explicit rounds=5000", "This is just a test", "$6$rounds=5000$toolongsaltstring", "$6$rounds=5000$toolongsaltstrin$lQ8jolhgVRVhY4b5pZKaysCLi0QBxGoNeKQzQ3glMhwllF7oGDZxUhx1yxdYcz/e1JSbq3y6JMxxl8audkUEm0"},
		{"spec rounds clamped", "the minimum number is still observed", "$6$rounds=10$roundstoolow", "$6$rounds=1000$roundstoolow$kUMsbe306n21p9R.FRkW3IGn.S9NPN0x50YhH1xhLsPuWGsUSklZt58jaTfF4ZEQpyUNGc0dqbpBYYBaHHrsX."},
		{"long text", "a very much longer text to encrypt.  This one even stretches over morethan one line.", "$6$rounds=1000$x", "$6$rounds=1000$x$9zTyigxRUYmUuH2oBSV0l1TWGldWN76gJlOP10KAmYKWOiyaEHRtHWMKNmI2OnuchzAKuZDYEc8K4.utlsaLV/"},
		// Cross-checked with `openssl passwd -6`.
		{"short", "pw", "$6$saltstring", "$6$saltstring$.vnWcCATS7HX9wLGcWGmRWMy3QtkFQmcbgZ0JzwapmXyqGJ2Gt5UXnLK..eJGzeBsKnKBZB8CvweVE1t5sq6n."},
		{"one byte", "x", "$6$saltstring", "$6$saltstring$nk7Qohr7tOmwY2mX639VRP.Lyvj3uhcgpatqHuLC867qfSHKq1LDuKa/h7Es9Nv0aL08pbF.cnQlRqhaoKT/D."},
		{"utf-8", "ünïcødé", "$6$saltstring", "$6$saltstring$1hV3H/tCkEqEZ9J9KNFQwcyX49UfGZzksRkXKeC158pdhB62xYp9kglI5lle1ReFUK8.WhgaWWBi01l7QrGOG1"},
		{"longer than digest", long, "$6$saltstring", "$6$saltstring$sIRykBS7W9H8Begecqfp9EBO0PgJcNLm/IfTWftLr9lI9QW0x.P7rny5vRVXJVT0kvV782vfKPKm723XXOFvR0"},
		{"salt cut at 16", "pw", "$6$toolongsaltstringXYZW", "$6$toolongsaltstrin$HVORu0hdHsOheLM1WO9hf3tacVjHKywcUz1aTsZ5hYxepcv6cJl00D6EYvHRP50Nvzlq8DxhE70/.e8qOYWuN/"},
		{"verify against full hash", "pw", "$6$saltstring$.vnWcCATS7HX9wLGcWGmRWMy3QtkFQmcbgZ0JzwapmXyqGJ2Gt5UXnLK..eJGzeBsKnKBZB8CvweVE1t5sq6n.", "$6$saltstring$.vnWcCATS7HX9wLGcWGmRWMy3QtkFQmcbgZ0JzwapmXyqGJ2Gt5UXnLK..eJGzeBsKnKBZB8CvweVE1t5sq6n."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SHA512Crypt(tt.password, tt.setting)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("SHA512Crypt(%q, %q)\n got %s\nwant %s", tt.password, tt.setting, got, tt.want)
			}
		})
	}
}

func TestSHA512CryptErrors(t *testing.T) {
	for _, s := range []string{"", "$5$salt", "$6$rounds=x$salt", "saltstring"} {
		if _, err := SHA512Crypt("pw", s); err == nil {
			t.Errorf("SHA512Crypt(pw, %q): no error", s)
		}
	}
}

func TestHashPassword(t *testing.T) {
	h1, err := HashPassword("secret")
	if err != nil {
		t.Fatal(err)
	}
	h2, err := HashPassword("secret")
	if err != nil {
		t.Fatal(err)
	}
	if h1 == h2 {
		t.Errorf("two hashes of one password are equal (salt not random): %s", h1)
	}
	if !strings.HasPrefix(h1, "$6$") || len(h1) != len("$6$")+16+1+86 {
		t.Errorf("HashPassword = %q, want $6$ + 16-char salt + 86-char hash", h1)
	}
	if again, _ := SHA512Crypt("secret", h1); again != h1 {
		t.Errorf("verifying against own hash: got %s want %s", again, h1)
	}
}
