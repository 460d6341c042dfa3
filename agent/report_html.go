package agent

// reportHTML is the page WriteReport fills. It loads nothing: the style
// is inline, screenshots are data: URIs, and enlarging one is a
// <details> toggle, so the page needs no script and works offline.
const reportHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.R.Task}} · {{label .R.Status}}</title>
<style>
:root {
  --fg: #1f2328; --muted: #656d76; --line: #d8dee4; --soft: #f6f8fa;
  --ok: #1a7f37; --ok-bg: #dafbe1; --warn: #9a6700; --warn-bg: #fff8c5;
  --bad: #cf222e; --bad-bg: #ffebe9; --shed: #6639ba; --shed-bg: #fbefff;
  --accent: #0969da;
}
* { box-sizing: border-box; }
body {
  margin: 0; padding: 32px 24px 64px; color: var(--fg); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
main { max-width: 1040px; margin: 0 auto; }
h1 { font-size: 26px; margin: 0 0 8px; word-break: break-word; }
h2 { font-size: 18px; margin: 36px 0 12px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 13px; }
.muted { color: var(--muted); }
.head { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; }
.badge {
  display: inline-block; padding: 2px 10px; border-radius: 999px; font-size: 13px; font-weight: 600;
  border: 1px solid currentColor; white-space: nowrap;
}
.badge.ok { color: var(--ok); background: var(--ok-bg); }
.badge.warn { color: var(--warn); background: var(--warn-bg); }
.badge.bad { color: var(--bad); background: var(--bad-bg); }
.badge.shed { color: var(--shed); background: var(--shed-bg); }
.badge.other { color: var(--muted); background: var(--soft); }
.reason { margin: 4px 0 16px; color: var(--muted); word-break: break-word; }
.answer {
  border-left: 4px solid var(--accent); background: #f1f8ff; padding: 12px 16px; border-radius: 6px;
  font-size: 18px; font-weight: 500; white-space: pre-wrap; word-break: break-word;
}
.answer.none { border-color: var(--line); background: var(--soft); color: var(--muted); font-weight: 400; font-size: 15px; }
.label { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 18px 0 4px; }
ol.plan { margin: 4px 0 0; padding-left: 24px; }
ol.plan li { margin: 2px 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; background: #fff; }
.card .v { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .k { font-size: 12px; color: var(--muted); }
.card.alert .v { color: var(--warn); }
.meter { margin-top: 14px; }
.meter .cap { display: flex; justify-content: space-between; font-size: 13px; color: var(--muted); margin-bottom: 4px; flex-wrap: wrap; gap: 8px; }
.track { position: relative; height: 12px; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
.track .res { position: absolute; inset: 0 auto 0 0; background: #b6d7ff; }
.track .used { position: absolute; inset: 0 auto 0 0; background: var(--accent); }
.track.over .res { background: #ffb3b3; }
.key { display: inline-block; width: 10px; height: 10px; border-radius: 2px; vertical-align: -1px; margin-right: 4px; }
.step { border: 1px solid var(--line); border-radius: 8px; margin: 0 0 14px; overflow: hidden; }
.step > header {
  display: flex; align-items: baseline; gap: 10px; flex-wrap: wrap;
  background: var(--soft); padding: 8px 14px; border-bottom: 1px solid var(--line);
}
.step .n { font-weight: 700; color: var(--muted); min-width: 2.2em; }
.step .act { font-weight: 600; word-break: break-word; }
.step .who { font-size: 12px; padding: 0 8px; border-radius: 999px; border: 1px solid var(--line); color: var(--muted); background: #fff; }
.step .time { margin-left: auto; font-size: 13px; color: var(--muted); font-variant-numeric: tabular-nums; }
.step .body { display: flex; flex-wrap: wrap; gap: 16px; padding: 12px 14px; }
.step .info { flex: 1 1 420px; min-width: 0; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; margin: 0; }
dl.kv dt { color: var(--muted); font-size: 13px; }
dl.kv dd { margin: 0; word-break: break-word; }
.verdict { font-weight: 600; }
details.shot { flex: 0 0 240px; }
details.shot > summary { list-style: none; cursor: zoom-in; }
details.shot > summary::-webkit-details-marker { display: none; }
details.shot img { display: block; width: 100%; border: 1px solid var(--line); border-radius: 6px; }
details.shot[open] { flex-basis: 100%; order: 3; }
details.shot[open] > summary { cursor: zoom-out; }
.shot-missing { flex: 0 0 240px; align-self: flex-start; padding: 24px 12px; text-align: center; font-size: 12px; color: var(--muted); border: 1px dashed var(--line); border-radius: 6px; word-break: break-all; }
.hint { font-size: 12px; color: var(--muted); text-align: center; margin-top: 2px; }
details.shot[open] .hint::after { content: " (click to shrink)"; }
.calls { flex: 1 1 100%; order: 2; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { font-weight: 600; color: var(--muted); background: var(--soft); }
th:nth-child(-n+2), td:nth-child(-n+2) { text-align: left; }
tbody tr:hover { background: #fafbfc; }
tfoot td { font-weight: 600; border-bottom: none; }
td.hot { color: var(--warn); font-weight: 600; }
.none { color: var(--muted); font-style: italic; }
footer { margin-top: 40px; font-size: 12px; color: var(--muted); }
</style>
</head>
<body>
<main>
{{with .R}}
<header>
  <div class="head">
    <h1>{{.Task}}</h1>
    <span class="badge {{$.StatusClass}}">{{label .Status}}{{if eq .SuccessBy "success_check"}} · verified{{else if eq .SuccessBy "model"}} · judged by the model{{end}}</span>
  </div>
  {{if .Reason}}<p class="reason">{{.Reason}}</p>{{end}}
  {{if .Params}}<p class="reason">Parameters: {{range $k, $v := .Params}}<code>{{$k}}={{$v}}</code> {{end}}</p>{{end}}
  {{if .Model}}<p class="reason">Model: {{.Model}}.</p>{{end}}
  {{with .Learned}}<p class="reason">Learned run {{.Key}}: {{num .Replayed}} steps replayed, {{num .Asked}} asked of the model{{if .AnswerRead}}; the answer read where it was learned, with no call{{end}}{{if .Miss}}; the replay stopped ({{.Miss}}: {{.MissDetail}}){{end}}{{if .Stored}}; {{.Stored}}{{if .StoredRevision}} as revision {{.StoredRevision}}{{end}}{{end}}.</p>{{end}}
  <div class="label">Answer</div>
  {{if .Answer}}<div class="answer">{{.Answer}}</div>{{else}}<div class="answer none">No answer.</div>{{end}}
  {{if .Plan}}
  <div class="label">Plan</div>
  <ol class="plan">{{range .Plan}}<li>{{.}}</li>{{end}}</ol>
  {{end}}
  {{if .Downloads}}
  <div class="label">Downloads</div>
  <ul class="plan">{{range .Downloads}}<li>{{if .Saved}}<a href="downloads/{{.Name}}">{{.Name}}</a> · {{num .Bytes}} bytes{{else}}{{.Name}}: not saved, {{.Detail}}{{end}}</li>{{end}}</ul>
  {{end}}
</header>

<h2>Totals</h2>
{{with .Totals}}
<div class="cards">
  <div class="card"><div class="v">{{num .Steps}}</div><div class="k">steps</div></div>
  <div class="card"><div class="v">{{num .Calls}}</div><div class="k">model calls</div></div>
  <div class="card"><div class="v">{{num .PromptTokens}}</div><div class="k">prompt tokens</div></div>
  {{if .CachedTokens}}<div class="card"><div class="v">{{num .CachedTokens}}</div><div class="k">of them cached</div></div>{{end}}
  {{if .Images}}<div class="card"><div class="v">{{num .ImageTokens}}</div><div class="k">image tokens ({{num .Images}} screenshots)</div></div>{{end}}
  <div class="card"><div class="v">{{num .TokensReserved}}</div><div class="k">tokens reserved</div></div>
  <div class="card"><div class="v">{{num .TokensUsed}}</div><div class="k">tokens used</div></div>
  {{if .TokensSaved}}<div class="card"><div class="v">{{num .TokensSaved}}</div><div class="k">tokens saved by learned steps</div></div>{{end}}
  {{if .TokenBudget}}<div class="card"><div class="v">{{num .TokenBudget}}</div><div class="k">token budget</div></div>{{end}}
  <div class="card"><div class="v">{{dur .ModelMS}}</div><div class="k">model time</div></div>
  <div class="card"><div class="v">{{dur .ElapsedMS}}</div><div class="k">elapsed</div></div>
  <div class="card{{if .Retries}} alert{{end}}"><div class="v">{{num .Retries}}</div><div class="k">retries</div></div>
  <div class="card{{if .RateLimited}} alert{{end}}"><div class="v">{{num .RateLimited}}</div><div class="k">429s (rate limited)</div></div>
  {{if .StoreWritesFailed}}<div class="card alert"><div class="v">{{num .StoreWritesFailed}}</div><div class="k">budget writes lost</div></div>{{end}}
  {{if .Mended}}<div class="card"><div class="v">{{num .Mended}}</div><div class="k">answers mended</div></div>{{end}}
  {{if .Repaired}}<div class="card alert"><div class="v">{{num .Repaired}}</div><div class="k">answers repaired</div></div>{{end}}
  {{if .Invalid}}<div class="card alert"><div class="v">{{num .Invalid}}</div><div class="k">answers invalid</div></div>{{end}}
</div>
<div class="meter">
  <div class="cap">
    {{if .TokenBudget}}
    <span><span class="key" style="background:#b6d7ff"></span>reserved {{num .TokensReserved}} · <span class="key" style="background:#0969da"></span>used {{num .TokensUsed}}</span>
    <span>of a budget of {{num .TokenBudget}} ({{$.ReservedPct}}% reserved{{if $.OverBudget}}, over budget{{end}})</span>
    {{else}}
    <span><span class="key" style="background:#0969da"></span>used {{num .TokensUsed}} of <span class="key" style="background:#b6d7ff"></span>reserved {{num .TokensReserved}}</span>
    <span>{{$.UsedPct}}% of the reservation used · no token budget set</span>
    {{end}}
  </div>
  <div class="track{{if $.OverBudget}} over{{end}}"><div class="res" style="width: {{$.ReservedPct}}%"></div><div class="used" style="width: {{$.UsedPct}}%"></div></div>
</div>
<div class="meter">
  <div class="cap"><span>model time {{dur .ModelMS}} of {{dur .ElapsedMS}} elapsed</span><span>{{$.ModelPct}}% waiting on the model</span></div>
  <div class="track"><div class="used" style="width: {{$.ModelPct}}%"></div></div>
</div>
{{end}}

<h2>Steps</h2>
{{end}}
{{range .Steps}}
<section class="step">
  <header>
    <span class="n">#{{.N}}</span>
    <code class="act">{{.Action}}</code>
    <span class="who">{{if .Scripted}}scripted{{else if .Replayed}}replayed · saved {{num .TokensSaved}} tokens{{else}}model-picked{{end}}</span>
    <span class="time">{{dur .ElapsedMS}} elapsed · {{dur .AgentMS}} agent</span>
  </header>
  <div class="body">
    <div class="info">
      <dl class="kv">
        {{if .Target}}<dt>target</dt><dd>{{.Target}}</dd>{{end}}
        <dt>outcome</dt><dd>{{.Outcome}}</dd>
        <dt>url after</dt><dd class="mono">{{.URL}}</dd>
        {{if .Why}}<dt>why</dt><dd>{{.Why}}</dd>{{end}}
        {{if .Verdict}}<dt>verdict</dt><dd class="verdict">{{.Verdict}}</dd>{{end}}
      </dl>
    </div>
    {{if .Shot}}
    <details class="shot">
      <summary><img src="{{.Shot}}" alt="screenshot after step {{.N}}"><div class="hint">screenshot after step {{.N}}</div></summary>
    </details>
    {{else if .Screenshot}}
    <div class="shot-missing">screenshot {{.Screenshot}} not found</div>
    {{end}}
    {{if or .Calls (not (or .Scripted .Replayed))}}<div class="calls">{{template "calls" .Calls}}</div>{{end}}
  </div>
</section>
{{else}}
<p class="none">No steps.</p>
{{end}}

{{with .R}}
<h2>Calls outside steps</h2>
<p class="muted">Planning and summarizing.</p>
{{template "calls" .Calls}}
{{end}}
<footer>headroom run report</footer>
</main>
</body>
</html>
{{define "calls"}}{{if .}}<table>
<thead><tr><th>type</th><th>deployment</th><th>max_tokens</th><th>n</th><th>prompt tokens</th><th>reserved</th><th>used</th><th>latency ms</th><th>retries</th><th>429s</th></tr></thead>
<tbody>{{range .}}
<tr><td><code>{{.Type}}</code></td><td>{{.Deployment}}</td><td>{{num .MaxTokens}}</td><td>{{num .N}}</td><td>{{num .PromptTokens}}</td><td>{{num .TokensReserved}}</td><td>{{num .TokensUsed}}</td><td>{{num .LatencyMS}}</td><td{{if .Retries}} class="hot"{{end}}>{{num .Retries}}</td><td{{if .RateLimited}} class="hot"{{end}}>{{num .RateLimited}}</td></tr>{{end}}
</tbody>
{{if gt (len .) 1}}{{with total .}}<tfoot><tr><td>total</td><td></td><td></td><td>{{num .N}}</td><td>{{num .PromptTokens}}</td><td>{{num .TokensReserved}}</td><td>{{num .TokensUsed}}</td><td>{{num .LatencyMS}}</td><td>{{num .Retries}}</td><td>{{num .RateLimited}}</td></tr></tfoot>{{end}}{{end}}
</table>{{else}}<p class="none">No model calls.</p>{{end}}{{end}}
`
