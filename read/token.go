package read

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// token is where a paged query stopped: per scanned range (one per salt
// bucket), the last row key consumed, or nothing when the range was not
// started, or done when it is exhausted. Resuming each range right after its
// own last key gives no gaps and no repeats, whatever the merge order did.
type token struct {
	Query string   `json:"q"`
	Last  [][]byte `json:"l"`
	Done  []bool   `json:"d"`
}

func (t token) encode() (string, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("read: encoding token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func decodeToken(s, query string, ranges int) (token, error) {
	var t token
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return t, fmt.Errorf("%w: the resume token is not base64", ErrBadRequest)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("%w: malformed resume token", ErrBadRequest)
	}
	if t.Query != query || len(t.Last) != ranges || len(t.Done) != ranges {
		return t, fmt.Errorf("%w: the resume token belongs to another query", ErrBadRequest)
	}
	return t, nil
}
