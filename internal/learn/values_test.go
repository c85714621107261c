package learn

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNumber(t *testing.T) {
	tests := []struct {
		lit                string
		integral, negative bool
	}{
		{"0", true, false}, {"-0", true, false}, {"-0.0", true, false}, {"12", true, false},
		{"-12", true, true}, {"1.0", true, false}, {"1.5", false, false}, {"-1.5", false, true},
		{"1e2", true, false}, {"1.25e2", true, false}, {"1.255e2", false, false}, {"125e-2", false, false},
		{"100e-2", true, false}, {"0.0001e4", true, false}, {"1E+3", true, false}, {"-0.5e1", true, true},
		{"5e-1", false, false}, {"1e999999999", true, false}, {"1e-999999999", false, false}, {"0e-999999999", true, false},
	}
	for _, tc := range tests {
		integral, negative := number(tc.lit)
		assert.Equal(t, tc.integral, integral, "%s integral", tc.lit)
		assert.Equal(t, tc.negative, negative, "%s negative", tc.lit)
	}
}

func TestSecretName(t *testing.T) {
	for _, name := range []string{"password", "newPassword", "PASSWD", "pwd", "client_secret", "accessToken",
		"apiKey", "api_key", "x-api-key", "Authorization", "auth", "cookie", "sessionId", "credentials",
		"cardNumber", "creditcard", "cvv", "ssn", "pin", "userPIN", "pin_code", "key", "privateKey", "otp", "signature",
		"passphrase", "passcode", "pincode", "pw", "new_pw"} {
		assert.True(t, secretName(name), name)
	}
	for _, name := range []string{"email", "name", "shipping", "mapping", "monkey", "keyboard", "status", "passenger", "turkey", "spinner", "address"} {
		assert.False(t, secretName(name), name)
	}
}

// TestSecretName_Codes: one-time and verification codes, passports and
// wallet phrases are secret too (found by review: "totp", one word, did
// not match the word "otp", and a six-digit code seen three times became
// an enum value; "passport" and "security_code" likewise).
func TestSecretName_Codes(t *testing.T) {
	for _, name := range []string{"totp", "totpCode", "hotp", "passport", "passportNumber", "security_code", "securityCode",
		"verification_code", "verificationCode", "recoveryCodes", "mnemonic", "mfa_code", "mfaCode", "2fa"} {
		assert.True(t, secretName(name), name)
	}
	for _, name := range []string{"code", "country_code", "postalCode", "promoCode", "status_code", "currency"} {
		assert.False(t, secretName(name), name)
	}
}

func TestLooksLikeData(t *testing.T) {
	for _, s := range []string{"42", "0", "2026-01-02", "1.2.3", "3e4666bf-d5e5-4aa7-b8ce-cefe41c7568a", "9fceb02d",
		"abc123", "ada@example.com", "a b", "a:b", "x=1", "café", "a\x00b"} {
		assert.True(t, looksLikeData(s, false), s)
	}
	for _, s := range []string{"users", "v1", "facade", "deadbeef", "order_items", "my-page", "a1", "api", "x.json", "AbCdEfGhIjKlMnOpQrStUv"} {
		assert.False(t, looksLikeData(s, false), s)
	}
	assert.True(t, looksLikeData("AbCdEfGhIjKlMnOpQrStUv", true), "20 bytes or more, in a path")
	assert.False(t, dataName("notificationPreferencesEnabled"), "a long field name is a name")
}

func TestFormatsOf(t *testing.T) {
	tests := map[string]string{
		"3e4666bf-d5e5-4aa7-b8ce-cefe41c7568a": "uuid",
		"2026-01-02T03:04:05Z":                 "date-time",
		"2026-02-28":                           "date",
		"10.1.2.3":                             "ipv4",
		"fe80::1":                              "ipv6",
		"ada@example.com":                      "email",
		"https://example.com/a":                "uri",
		"2026-02-30":                           "",
		"1.2.3":                                "",
		"ada":                                  "",
	}
	for s, want := range tests {
		m := formatsOf(s, allFormats)
		got := ""
		for i, name := range formatNames {
			if m&(1<<i) != 0 {
				got = name
				break
			}
		}
		assert.Equal(t, want, got, s)
	}
}

func TestTokenLike(t *testing.T) {
	assert.True(t, tokenLike("tk-9f8e7d6c5b4a39281706zz"))
	assert.False(t, tokenLike("credit_card_payment"), "words")
	assert.False(t, tokenLike("size10"), "short")
	for _, personal := range []string{"4111111111111111", "4111 1111 1111 1111", "+44 20 7946 0958", "555-123-4567", "DE89370400440532013000"} {
		assert.True(t, tokenLike(personal), "%s: a card, telephone or account number", personal)
	}
	assert.False(t, tokenLike("2026-11-26"), "a date")
	assert.False(t, tokenLike("10:30-12:45"), "times")
}

// TestSecretName_Acronyms: camelCase words are split where an acronym
// meets the next word too ("PINCode" is PIN and Code), as the docs'
// "split at camelCase" reads; only a lower-case letter before an upper-case
// one split, so the values of PINCode, OTPCode or SSNLast4 were recorded.
func TestSecretName_Acronyms(t *testing.T) {
	for _, name := range []string{"PINCode", "OTPCode", "SSNLast4", "userPINCode", "SIDList", "SALTValue"} {
		assert.True(t, secretName(name), name)
	}
	for _, name := range []string{"HTTPServer", "URLPath", "IDList", "Pinterest", "APIVersion", "OTAUpdate"} {
		assert.False(t, secretName(name), name)
	}
}

// TestSecretName_AcronymBeforeLowerCase: an acronym followed by a word in
// lower case, or a plural s, is a word too. Splitting "PINcode" before its
// N (as for "PINCode") found neither "pin" nor "pincode", though the
// whole name, one word before acronyms were split, was "pincode".
func TestSecretName_AcronymBeforeLowerCase(t *testing.T) {
	for _, name := range []string{"PINcode", "PINs", "userPINs", "OTPcode", "SSNs", "newPWs"} {
		assert.True(t, secretName(name), name)
	}
	for _, name := range []string{"HTTPServer", "URLPath", "IDList", "Pinterest", "APIVersion", "OTAUpdate", "PINGStatus", "URLs", "IDs"} {
		assert.False(t, secretName(name), name)
	}
}

// TestTokenLike_OldExportNeverAnEnum: an export from a learner that
// predates the 12-digit rule (a replica not yet upgraded, an export kept
// from before) may hold a card number as an enum value in the clear, or
// shares that reveal one when merged: the contracts inferred from it have
// no enum there, as a learner of today would.
func TestTokenLike_OldExportNeverAnEnum(t *testing.T) {
	var bodies []string
	for i := 0; i < 24; i++ {
		bodies = append(bodies, `{"ref":"`+[]string{"alpha", "beta"}[i%2]+`"}`)
	}
	data, err := json.Marshal(learn(t, Limits{}, posts(bodies...)...))
	require.NoError(t, err)
	require.Contains(t, string(data), `"alpha"`)
	old := strings.Replace(string(data), `"alpha"`, `"4111111111111111"`, 1) // as a learner before the rule kept it
	var o Observations
	require.NoError(t, json.Unmarshal([]byte(old), &o))
	cs := o.Contracts()
	require.Len(t, cs, 1)
	assert.NotContains(t, jsonOf(t, cs[0].Schema), "4111111111111111")
	assert.Contains(t, jsonOf(t, only(t, Limits{}, posts(bodies...)...).Schema), `"enum"`, "the values of today still make an enum")
}

// TestSecretName_CodesAndPhrasesOtherwiseNamed: the one-time codes and
// wallet phrases TestSecretName_Codes covers, named as apps also name
// them (found by review: one_time_code, oneTimeCode, seed_phrase,
// seedPhrase, recovery_phrase, backup_code and two_factor_code were data,
// a code seen three times an enum value of a learned schema).
func TestSecretName_CodesAndPhrasesOtherwiseNamed(t *testing.T) {
	for _, name := range []string{"one_time_code", "oneTimeCode", "verify_code", "verifyCode", "sms_code", "smsCode",
		"two_factor_code", "twoFactorCode", "backup_code", "backupCodes", "seed_phrase", "seedPhrase",
		"recovery_phrase", "recoveryPhrase"} {
		assert.True(t, secretName(name), name)
	}
	for _, name := range []string{"code", "country_code", "postalCode", "promoCode", "status_code", "phrase",
		"search_phrase", "seed", "oneTimePayment", "backup", "smsEnabled"} {
		assert.False(t, secretName(name), name)
	}
}

// TestSecretName_SeparatedOtherwise: the secret names written with _
// (security_code, one_time_code, seed_phrase…) are as secret written with
// another separator, as kebab-case APIs and dotted names write them (found
// by review: "security-code", whose words are "security" and "code", was
// not secret, and a card's security code seen three times became an enum
// value of the learned schema; "x-api-key" was, by its word "key").
func TestSecretName_SeparatedOtherwise(t *testing.T) {
	for _, name := range []string{"security-code", "Security-Code", "security.code", "verification-code", "recovery-code",
		"one-time-code", "verify-code", "sms-code", "two-factor-code", "backup-code", "seed-phrase", "recovery-phrase",
		"card.security.code", "api-key"} {
		assert.True(t, secretName(name), name)
	}
	for _, name := range []string{"country-code", "postal-code", "promo-code", "status.code", "search-phrase", "one-time-payment", "backup-enabled"} {
		assert.False(t, secretName(name), name)
	}
	var bodies []string
	for i := 0; i < 24; i++ {
		bodies = append(bodies, `{"security-code":"`+[]string{"737", "123"}[i%2]+`"}`)
	}
	assert.NotContains(t, jsonOf(t, only(t, Limits{}, posts(bodies...)...).Schema), "737", "no value is kept under a secret name")
}
