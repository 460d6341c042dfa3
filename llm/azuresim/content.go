package azuresim

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"strings"

	// The formats Azure's vision models take that the standard library
	// reads; DecodeConfig knows only the registered ones.
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"
)

// chatPart is one element of a chat message's content array. Parts of a
// type the simulator does not read (audio, files) count their text, if
// any, and nothing else.
type chatPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
}

// picture is an image a message carries: what its tokens are counted
// from, and a digest of its bytes and detail for the prompt cache.
type picture struct {
	width, height int
	detail        string
	digest        [sha256.Size]byte
}

// partError is a content part at fault: param is the field under the
// message's content (such as "[1].image_url.url"), msg what is wrong.
type partError struct {
	param, msg string
}

// chatContent reads a chat message's content, a string or an array of
// parts: the text of its text parts, joined, and its images in order.
func chatContent(raw json.RawMessage) (string, []picture, *partError) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil, nil
	}
	var parts []chatPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, &partError{msg: "content must be a string or an array of content parts"}
	}
	var b strings.Builder
	var pics []picture
	for i, p := range parts {
		if p.Type != "image_url" {
			b.WriteString(p.Text)
			continue
		}
		at := fmt.Sprintf("[%d].image_url", i)
		if p.ImageURL == nil {
			return "", nil, &partError{at, "an image_url part needs an image_url object with a url"}
		}
		pic, err := readPicture(p.ImageURL.URL, p.ImageURL.Detail)
		if err != nil {
			err.param = at + err.param
			return "", nil, err
		}
		pics = append(pics, pic)
	}
	return b.String(), pics, nil
}

// readPicture decodes an image sent as a base64 data URL far enough to
// learn its size. The simulator fetches nothing, so an http(s) URL, which
// Azure would download, is refused too.
func readPicture(url, detail string) (picture, *partError) {
	switch detail {
	case "", "auto", "low", "high":
	default:
		return picture{}, &partError{".detail", fmt.Sprintf("'%s' is not one of 'low', 'high', 'auto'", detail)}
	}
	bad := func(format string, args ...any) (picture, *partError) {
		return picture{}, &partError{".url", fmt.Sprintf(format, args...)}
	}
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return bad("expected a base64 data URL such as data:image/png;base64,...; the simulator does not fetch images from %.40q", url)
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return bad("expected a base64 data URL such as data:image/png;base64,...")
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return bad("the image data is not valid base64: %v", err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return bad("the image could not be read (%v): send a PNG, JPEG or GIF image", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return bad("the %s image is %d×%d: it has no pixels", format, cfg.Width, cfg.Height)
	}
	// auto is counted as high, and the cache sees the image as counted.
	level := "high"
	if detail == "low" {
		level = "low"
	}
	return picture{
		width: cfg.Width, height: cfg.Height, detail: detail,
		digest: sha256.Sum256(append(raw, level...)),
	}, nil
}
