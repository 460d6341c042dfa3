package azuresim

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"

	"github.com/headroom-agent/headroom/llm/tokens"
)

// dataURL is a w×h image in format (png, jpeg, gif) as a base64 data URL;
// shade sets its pixels, so two images of one size can differ.
func dataURL(t *testing.T, format string, w, h int, shade uint8) string {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Gray{shade}, color.White})
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "gif":
		err = gif.Encode(&b, img, nil)
	}
	if err != nil || b.Len() == 0 {
		t.Fatalf("encoding a %s: %v", format, err)
	}
	return "data:image/" + format + ";base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

func azureClient(url string) openai.Client {
	return openai.NewClient(
		azure.WithEndpoint(url, "2024-10-21"),
		azure.WithAPIKey("k"),
		azure.WithUnsafeAllowHTTP(),
		option.WithMaxRetries(0),
	)
}

func imagePart(url string, detail string) openai.ChatCompletionContentPartUnionParam {
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url, Detail: detail})
}

// The published examples of each rule.
func TestImageTokensFollowThePublishedRules(t *testing.T) {
	for _, c := range []struct {
		model  string
		w, h   int
		detail string
		want   int64
	}{
		{"gpt-4o", 1024, 1024, "high", 765},
		{"gpt-4o", 1024, 1024, "low", 85},
		{"gpt-4o", 2048, 4096, "high", 1105}, // 768×1536: 2×3 tiles
		{"gpt-4o", 1280, 720, "auto", 1105},  // 3×2 tiles, never scaled up
		{"gpt-4o", 1280, 720, "", 1105},
		{"GPT-4o-2024-11-20", 100, 100, "high", 255},
		{"gpt-4o-mini", 1024, 1024, "low", 2833},
		{"gpt-4.1", 512, 512, "high", 255},
		{"gpt-5", 512, 512, "high", 210},
		{"o1", 512, 512, "low", 75},
		{"o3", 512, 512, "high", 225},
		{"gpt-4.1-mini", 4000, 1474, "high", 2489}, // the cap: 1,536 × 1.62
		{"gpt-4.1-mini", 1024, 1024, "low", 1659},  // detail aside: 1,024 × 1.62
		{"gpt-4.1-nano", 320, 320, "high", 246},
		{"gpt-5-nano", 33, 33, "high", 10}, // 2×2 patches × 2.46
		{"o4-mini", 64, 64, "high", 7},
		{"my-model", 512, 512, "high", 255},
		{"gpt-4o", 0, 100, "high", 0},
	} {
		if got := ImageTokens(c.model, c.w, c.h, c.detail); got != c.want {
			t.Errorf("ImageTokens(%s, %d×%d, %q) = %d, want %d", c.model, c.w, c.h, c.detail, got, c.want)
		}
	}
}

// seen is a Model that keeps how many images the last call carried.
type seen struct{ images *atomic.Int64 }

func (s seen) Reply(r Request) string {
	s.images.Store(int64(r.Images))
	return Echo{}.Reply(r)
}

func TestImagesCountInUsageAndAtAdmission(t *testing.T) {
	var images atomic.Int64
	cfg := Config{Deployments: []Deployment{
		{Name: "vision", Model: "gpt-4o", TPM: 1_000_000, Reply: "seen"},
		{Name: "flat", Model: "gpt-4o", TPM: 1_000_000, ImageAdmission: 1200},
	}}
	s, url := serve(t, cfg, Options{Models: map[string]Model{"seen": seen{&images}}})
	client := azureClient(url)
	parts := []openai.ChatCompletionContentPartUnionParam{
		openai.TextContentPart("what is this?"),
		imagePart(dataURL(t, "png", 1280, 720, 0), "auto"), // 1,105
		imagePart(dataURL(t, "jpeg", 100, 100, 0), "low"),  // 85
		imagePart(dataURL(t, "gif", 600, 300, 0), "high"),  // 85 + 2×1 tiles: 425
	}
	const published = 1105 + 85 + 425
	text := []tokens.Message{{Role: "user", Content: "what is this?"}}
	for _, c := range []struct {
		dep     string
		charged int64
	}{{"vision", published}, {"flat", 3 * 1200}} {
		var raw *http.Response
		res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model: c.dep, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(parts)}, MaxTokens: openai.Int(48),
		}, option.WithResponseInto(&raw))
		if err != nil {
			t.Fatalf("%s: %v", c.dep, err)
		}
		if got := res.Choices[0].Message.Content; got != "what is this?" {
			t.Errorf("%s: the model read %q, not the text parts", c.dep, got)
		}
		if want := int64(tokens.Chat(text)) + published; res.Usage.PromptTokens != want {
			t.Errorf("%s: prompt_tokens = %d, want the text's %d and the images' %d", c.dep, res.Usage.PromptTokens, tokens.Chat(text), published)
		}
		estimate := Estimate([]tokens.Message{{Content: "what is this?"}}, 48, 1, 1) + c.charged
		if got := raw.Header.Get("x-ratelimit-remaining-tokens"); got != strconv.FormatInt(1_000_000-estimate, 10) {
			t.Errorf("%s: remaining tokens %s, want %d: the text rule plus %d for the images", c.dep, got, 1_000_000-estimate, c.charged)
		}
		st := statsOf(t, s, c.dep)
		if st.Images != 3 || st.ImageTokens != published || st.ImageTokensCharged != c.charged || st.TokensEstimated != estimate {
			t.Errorf("%s: stats images %d, image tokens %d, charged %d, estimated %d", c.dep, st.Images, st.ImageTokens, st.ImageTokensCharged, st.TokensEstimated)
		}
	}
	if images.Load() != 3 {
		t.Errorf("the model was told of %d images, want 3", images.Load())
	}
}

// Patch models count the same image by its patches, whatever its detail.
func TestImagesCountByTheDeploymentsModel(t *testing.T) {
	_, url := serve(t, Config{Deployments: []Deployment{{Name: "nano", Model: "gpt-4.1-nano", TPM: 1_000_000}}}, Options{})
	client := azureClient(url)
	res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "nano", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			imagePart(dataURL(t, "png", 320, 320, 0), "low"),
		})},
		MaxTokens: openai.Int(8),
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(tokens.Chat([]tokens.Message{{Role: "user"}})) + 246; res.Usage.PromptTokens != want {
		t.Errorf("prompt_tokens = %d, want %d (100 patches × 2.46)", res.Usage.PromptTokens, want)
	}
}

func TestBadImagesAreRefused(t *testing.T) {
	s, url := serve(t, Config{Deployments: []Deployment{{Name: "d", Model: "gpt-4o", TPM: 1_000_000}}}, Options{})
	small := dataURL(t, "png", 10, 10, 0)
	const at = "messages[1].content[1].image_url"
	for _, c := range []struct {
		name  string
		image any
		param string
		says  string
	}{
		{"a web address", map[string]string{"url": "https://example.com/cat.png"}, at + ".url", "data URL"},
		{"not base64", map[string]string{"url": "data:image/png,abc"}, at + ".url", "data URL"},
		{"bad base64", map[string]string{"url": "data:image/png;base64,@@@"}, at + ".url", "not valid base64"},
		{"not an image", map[string]string{"url": "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("hello, world"))}, at + ".url", "PNG, JPEG or GIF"},
		{"an unknown detail", map[string]string{"url": small, "detail": "medium"}, at + ".detail", "'low', 'high', 'auto'"},
		{"no image_url", nil, at, "needs an image_url"},
	} {
		part := map[string]any{"type": "image_url"}
		if c.image != nil {
			part["image_url"] = c.image
		}
		body := map[string]any{"messages": []any{
			map[string]any{"role": "system", "content": "Look."},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "what is it?"}, part}},
		}}
		r := post(t, chatURL(url, "d"), body)
		msg, _ := r.errorField("message").(string)
		if r.status != 400 || r.errorField("param") != c.param || !strings.Contains(msg, c.says) || !strings.Contains(msg, c.param) {
			t.Errorf("%s: %d, param %v, message %q; want 400 naming %s and saying %q", c.name, r.status, r.errorField("param"), msg, c.param, c.says)
		}
	}
	if st := statsOf(t, s, "d"); st.Accepted != 0 {
		t.Errorf("%d refused calls were admitted", st.Accepted)
	}
}
