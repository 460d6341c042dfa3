package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// A Collector reads the view at each scrape: the figures are the store's
// and the process's own at that instant, never a cached copy.
type Collector struct {
	src     Source
	timeout time.Duration
}

// NewCollector collects src's view, giving each scrape timeout to read it.
func NewCollector(src Source, timeout time.Duration) *Collector {
	return &Collector{src: src, timeout: timeout}
}

var (
	dep = []string{"deployment"}

	descReserved      = prometheus.NewDesc("headroom_reserved_tokens", "Tokens the fleet holds in the deployment's current window.", dep, nil)
	descReservedRatio = prometheus.NewDesc("headroom_reserved_ratio", "Reserved tokens over the deployment's effective limit.", dep, nil)
	descLimit         = prometheus.NewDesc("headroom_limit_tokens_per_window", "The deployment's token limit: configured, and effective (the lower of that and Azure's header).", []string{"deployment", "kind"}, nil)
	descRPM           = prometheus.NewDesc("headroom_limit_requests_per_window", "The deployment's configured request limit.", dep, nil)
	descUtil          = prometheus.NewDesc("headroom_utilisation_ratio", "Share of the deployment's quota in use, per dimension (tokens this window, requests in the 10 s window).", []string{"deployment", "dimension"}, nil)
	descRequests      = prometheus.NewDesc("headroom_requests_in_window", "Requests the fleet made in the deployment's current request window.", []string{"deployment", "window"}, nil)
	descBreaker       = prometheus.NewDesc("headroom_breaker_open", "1 while the deployment's shared breaker is open.", dep, nil)
	descLimited       = prometheus.NewDesc("headroom_rate_limited_total", "429s this process met, by deployment and cause.", []string{"deployment", "cause"}, nil)
	descFleetLimited  = prometheus.NewDesc("headroom_fleet_rate_limited", "429s the whole fleet met on the deployment in this window and the last, by cause (the store's census).", []string{"deployment", "cause"}, nil)
	descAnswered      = prometheus.NewDesc("headroom_calls_answered_total", "Calls this process had answered, by deployment.", dep, nil)
	descSpread        = prometheus.NewDesc("headroom_headroom_spread_ratio", "The fullest deployment's reserved ratio less the emptiest's.", nil, nil)
	descFleetReserved = prometheus.NewDesc("headroom_fleet_reserved_tokens", "Tokens the fleet holds this window, over every deployment.", nil, nil)
	descAgents        = prometheus.NewDesc("headroom_active_agents", "The fleet's agents alive, by the store's census.", nil, nil)
	descWritesFailed  = prometheus.NewDesc("headroom_store_writes_failed_total", "Writes after a call (settle, cancel, open_breaker, effective_limit, absorb) the store did not take though asked again, by deployment and write: a breaker the fleet never saw, a reservation held to its window's end.", []string{"deployment", "write"}, nil)
	descStoreCalls    = prometheus.NewDesc("headroom_store_calls_total", "Calls this process made to the budget store, by operation (reserve, settle, cancel, usage, ...), however often each asked.", []string{"op"}, nil)
	descStoreAgain    = prometheus.NewDesc("headroom_store_asked_again_total", "Asks after a store call's first, by operation: the store did not answer in time, or refused the connection.", []string{"op"}, nil)
	descStoreDown     = prometheus.NewDesc("headroom_store_unavailable_total", "Store calls that ended without the store's answer though asked again, by operation.", []string{"op"}, nil)
	descShed          = prometheus.NewDesc("headroom_shed_total", "Calls this process shed for want of budget in time, by priority class.", []string{"priority"}, nil)
	descModelRatio    = prometheus.NewDesc("headroom_model_estimate_ratio", "What Azure is seen to charge over what headroom reserves, learned by the fleet (1 until learned).", dep, nil)
	descModelMargin   = prometheus.NewDesc("headroom_model_margin_ratio", "Share of the deployment's limit, as headroom counts it, reservations may use: the safety share kept back, divided by the estimate ratio.", dep, nil)
	descModelSafety   = prometheus.NewDesc("headroom_model_safety_ratio", "Share of the deployment's limit kept back for estimate error; it tightens toward the floor while the estimate holds.", dep, nil)
	descModelPacing   = prometheus.NewDesc("headroom_model_pacing_allowance_seconds", "The lag from admission to arrival that request pacing allows for, per request window.", dep, nil)
	descTypeCalls     = prometheus.NewDesc("headroom_calls_total", "Calls this process made, by call type.", []string{"call_type"}, nil)
	descTypeReserved  = prometheus.NewDesc("headroom_tokens_reserved_total", "Tokens this process's calls charged the budget, by call type.", []string{"call_type"}, nil)
	descTypeUsed      = prometheus.NewDesc("headroom_tokens_used_total", "Tokens this process's calls used, by call type.", []string{"call_type"}, nil)
	descTypeError     = prometheus.NewDesc("headroom_reservation_error_ratio", "Tokens charged over tokens used, by call type.", []string{"call_type"}, nil)
	descLearnedHits   = prometheus.NewDesc("headroom_learned_hits_total", "Runs this process replayed from a learned run to a verified end, by task.", []string{"task"}, nil)
	descLearnedMisses = prometheus.NewDesc("headroom_learned_misses_total", "Runs that did not follow a learned run to the end, by task and reason.", []string{"task", "reason"}, nil)
	descLearnedHeals  = prometheus.NewDesc("headroom_learned_heals_total", "Learned runs rewritten by a run the model finished, by task.", []string{"task"}, nil)
	descTypePrompt    = prometheus.NewDesc("headroom_prompt_tokens_total", "Prompt tokens the deployments counted of this process's calls, by call type and deployment.", []string{"call_type", "deployment"}, nil)
	descTypeCached    = prometheus.NewDesc("headroom_cached_tokens_total", "Prompt tokens the deployments read from their prompt caches (usage cached_tokens), by call type and deployment: over headroom_prompt_tokens_total, the share affinity keeps cached.", []string{"call_type", "deployment"}, nil)
	descTypeImages    = prometheus.NewDesc("headroom_images_total", "Screenshots this process's calls carried, by call type.", []string{"call_type"}, nil)
	descTypeImageTok  = prometheus.NewDesc("headroom_image_tokens_total", "Tokens this process's calls reserved for their images, by call type.", []string{"call_type"}, nil)
	descTypeTierBack  = prometheus.NewDesc("headroom_tier_fallbacks_total", "Calls a deployment refused the type's service tier for, sent once more on the default tier, by call type.", []string{"call_type"}, nil)
	descRuns          = prometheus.NewDesc("headroom_runs_total", "Agent runs ended, by status (succeeded, failed, stuck, ...): over them, the tokens a task costs.", []string{"status"}, nil)
	descStoreUp       = prometheus.NewDesc("headroom_store_up", "1 when this scrape read the shared budget store, 0 when it could not: the figures read from it are left out.", nil, nil)
	descTypeAnswers   = prometheus.NewDesc("headroom_answers_refused_total", "Answers the parser refused, by call type and what came of them: mended (a slip fixed without a request), repaired (read after one repair request), invalid (refused after it).", []string{"call_type", "outcome"}, nil)
)

func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descReserved, descReservedRatio, descLimit, descRPM, descUtil, descRequests, descBreaker,
		descLimited, descFleetLimited, descAnswered, descSpread, descFleetReserved, descAgents, descShed, descWritesFailed,
		descStoreCalls, descStoreAgain, descStoreDown,
		descModelRatio, descModelMargin, descModelSafety, descModelPacing,
		descTypeCalls, descTypeReserved, descTypeUsed, descTypeError, descTypeAnswers,
		descTypePrompt, descTypeCached, descTypeImages, descTypeImageTok, descTypeTierBack,
		descLearnedHits, descLearnedMisses, descLearnedHeals, descRuns, descStoreUp} {
		ch <- d
	}
}

func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	// A store that does not answer is a figure of its own, not a failed
	// scrape: the process's own counters still count, and "the store is
	// unreachable" is one rule on one gauge.
	v, err := c.src(ctx)
	g := func(d *prometheus.Desc, x float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, x, labels...)
	}
	n := func(d *prometheus.Desc, x float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, x, labels...)
	}
	g(descStoreUp, float64(b2i(err == nil)))
	c.collectTypes(ch, v, n, g)
	if err != nil {
		return
	}
	for _, d := range v.Deployments {
		g(descReserved, float64(d.Reserved), d.Name)
		g(descReservedRatio, d.ReservedFraction, d.Name)
		g(descLimit, float64(d.ConfiguredTPM), d.Name, "configured")
		g(descLimit, float64(d.EffectiveTPM), d.Name, "effective")
		g(descRPM, float64(d.RPM), d.Name)
		g(descUtil, d.TokenUtilisation, d.Name, "tokens")
		g(descUtil, d.RequestUtilisation, d.Name, "requests")
		g(descRequests, float64(d.Requests1s), d.Name, "1s")
		g(descRequests, float64(d.Requests10s), d.Name, "10s")
		g(descBreaker, float64(b2i(d.BreakerOpen)), d.Name)
		n(descAnswered, float64(d.Answered), d.Name)
		for _, w := range writes {
			n(descWritesFailed, float64(d.WritesFailed[w]), d.Name, w)
		}
		if m := d.Model; m != nil {
			g(descModelRatio, m.Ratio, d.Name)
			g(descModelMargin, m.Margin, d.Name)
			g(descModelSafety, m.Safety, d.Name)
			g(descModelPacing, m.Pacing.Seconds(), d.Name)
		}
		for _, cause := range causes {
			n(descLimited, float64(d.RateLimited[cause]), d.Name, string(cause))
			if d.FleetRateLimited != nil {
				g(descFleetLimited, float64(d.FleetRateLimited[cause]), d.Name, string(cause))
			}
		}
	}
	g(descSpread, v.Spread)
	g(descFleetReserved, float64(v.ReservedTokens))
	if v.Agents >= 0 {
		g(descAgents, float64(v.Agents))
	}
	for _, cl := range classes {
		n(descShed, float64(v.Shed[cl.c]), cl.name)
	}
	for op, st := range v.Store {
		n(descStoreCalls, float64(st.Calls), op)
		n(descStoreAgain, float64(st.AskedAgain), op)
		n(descStoreDown, float64(st.Unavailable), op)
	}
}

// collectTypes sends the process's own counters: its call types', its
// learned runs', its runs'. They are the process's, not the store's, so
// they are sent whether the store answered or not.
func (c *Collector) collectTypes(ch chan<- prometheus.Metric, v View, n, g func(*prometheus.Desc, float64, ...string)) {
	for _, t := range v.Types {
		n(descTypeCalls, float64(t.Calls), t.Name)
		n(descTypeReserved, float64(t.TokensReserved), t.Name)
		n(descTypeUsed, float64(t.TokensUsed), t.Name)
		g(descTypeError, t.ReservationError(), t.Name)
		n(descTypeAnswers, float64(t.Mended), t.Name, "mended")
		n(descTypeAnswers, float64(t.Repaired), t.Name, "repaired")
		n(descTypeAnswers, float64(t.Invalid), t.Name, "invalid")
		for d, p := range t.PromptTokens {
			n(descTypePrompt, float64(p), t.Name, d)
			n(descTypeCached, float64(t.CachedTokens[d]), t.Name, d)
		}
		n(descTypeImages, float64(t.Images), t.Name)
		n(descTypeImageTok, float64(t.ImageTokens), t.Name)
		n(descTypeTierBack, float64(t.TierFallbacks), t.Name)
	}
	for _, l := range v.Learned {
		n(descLearnedHits, float64(l.Hits), l.Task)
		n(descLearnedHeals, float64(l.Heals), l.Task)
		for reason, x := range l.Misses {
			n(descLearnedMisses, float64(x), l.Task, reason)
		}
	}
	for status, x := range v.Runs {
		n(descRuns, float64(x), status)
	}
}

// Handler serves the collector's metrics, and the Go runtime's, at
// /metrics, in a registry of its own (the process's default one stays
// free for a program that embeds this).
func Handler(c *Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	return mux
}
