import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { PriorityClass, Usage } from "../../../schema/wire/v2/index.ts";
import type { Engine, EngineAdapterSlots } from "../engine/engine.ts";
import type { HopPriorityStats } from "../engine/hop-priority.ts";
import type { Admission } from "./admission.ts";

/** Hop latencies from a few ms (a warm route) to minutes (a long answer on a slow CPU). */
const HOP_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * Sets a per-adapter gauge from the engine's slots, summing the revisions of a label (a canary beside the default)
 * and dropping labels the engine no longer holds.
 */
function setByLabel(
  gauge: Gauge<"adapter">,
  slots: readonly EngineAdapterSlots[],
  value: (slots: EngineAdapterSlots) => number,
): void {
  const sums = new Map<string, number>();
  for (const s of slots) sums.set(s.adapter, (sums.get(s.adapter) ?? 0) + value(s));
  gauge.reset();
  for (const [adapter, sum] of sums) gauge.set({ adapter }, sum);
}

/**
 * A node's Prometheus metrics (prom-client): what each hop cost, by hop and adapter, and the load that placement
 * reads from heartbeats (slots, queue, in-flight), so a dashboard shows the same numbers the edge acts on.
 * Gauges are read from the engine and admission at scrape time, never kept twice.
 */
export class NodeMetrics {
  readonly registry = new Registry();
  readonly #hopDuration: Histogram<"hop" | "adapter" | "outcome">;
  readonly #hops: Counter<"hop" | "adapter" | "outcome">;
  readonly #tokens: Record<keyof Usage, Counter<"adapter">>;
  readonly #kvReuse: Counter<"adapter">;
  readonly #overloads: Counter<"hop">;

  constructor(source: { engine: Engine; admission: Admission; nodeId: string }) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ node_id: source.nodeId });
    this.#hopDuration = new Histogram({
      name: "molmesh_hop_duration_seconds",
      help: "Time from a hop request reaching the node to its last reply, by hop, adapter and outcome.",
      labelNames: ["hop", "adapter", "outcome"],
      buckets: HOP_DURATION_BUCKETS,
      registers,
    });
    this.#hops = new Counter({
      name: "molmesh_hops_total",
      help: "Hops served, by hop, adapter and outcome (ok or the wire error code).",
      labelNames: ["hop", "adapter", "outcome"],
      registers,
    });
    const tokens = (name: string, help: string) =>
      new Counter({ name, help, labelNames: ["adapter"], registers });
    this.#tokens = {
      promptTokens: tokens("molmesh_prompt_tokens_total", "Prompt tokens of served hops."),
      cachedPromptTokens: tokens(
        "molmesh_cached_prompt_tokens_total",
        "Prompt tokens whose KV was reused from the (conversation, adapter) slot.",
      ),
      evaluatedPromptTokens: tokens(
        "molmesh_evaluated_prompt_tokens_total",
        "Prompt tokens the engine evaluated.",
      ),
      completionTokens: tokens("molmesh_completion_tokens_total", "Tokens generated."),
    };
    this.#kvReuse = new Counter({
      name: "molmesh_kv_reuse_hops_total",
      help: "Hops that reused KV from an earlier hop of the same (conversation, adapter).",
      labelNames: ["adapter"],
      registers,
    });
    this.#overloads = new Counter({
      name: "molmesh_overloads_total",
      help: "Hops refused with `overloaded` (the fair queue was at MOL_MAX_QUEUED, or a slot queue was full).",
      labelNames: ["hop"],
      registers,
    });
    new Gauge({
      name: "molmesh_slots_in_use",
      help: "Engine slots holding a running generation, by adapter.",
      labelNames: ["adapter"],
      registers,
      collect() {
        setByLabel(this, source.engine.snapshot(), (s) => s.totalSlots - s.freeSlots);
      },
    });
    new Gauge({
      name: "molmesh_slots_total",
      help: "Engine slots, by adapter.",
      labelNames: ["adapter"],
      registers,
      collect() {
        setByLabel(this, source.engine.snapshot(), (s) => s.totalSlots);
      },
    });
    new Gauge({
      name: "molmesh_queue_depth",
      help: "Generations waiting for a free slot, by adapter.",
      labelNames: ["adapter"],
      registers,
      collect() {
        setByLabel(this, source.engine.snapshot(), (s) => s.waiting);
      },
    });
    new Gauge({
      name: "molmesh_hops_in_flight",
      help: "Hops admitted and not yet finished (the admission limit is MOL_MAX_CONCURRENT).",
      registers,
      collect() {
        this.set(source.admission.inFlight);
      },
    });
    new Gauge({
      name: "molmesh_admission_queued",
      help: "Hops waiting in the node's fair queue for admission (its bound is MOL_MAX_QUEUED).",
      registers,
      collect() {
        this.set(source.admission.queued);
      },
    });
    new Gauge({
      name: "molmesh_admission_queued_tenants",
      help: "Tenants with hops waiting in the node's fair queue.",
      registers,
      collect() {
        this.set(source.admission.queuedTenants);
      },
    });
    const priority = source.engine.priority?.bind(source.engine);
    if (priority) registerPriorityMetrics(priority, registers);
  }

  /** One finished hop; `usage` is absent when it failed before the engine reported any. */
  recordHop(
    hop: PriorityClass | "unknown",
    adapter: string,
    outcome: string,
    seconds: number,
    usage?: Usage,
  ): void {
    this.#hopDuration.observe({ hop, adapter, outcome }, seconds);
    this.#hops.inc({ hop, adapter, outcome });
    if (outcome === "overloaded") this.#overloads.inc({ hop });
    if (!usage) return;
    for (const key of Object.keys(this.#tokens) as Array<keyof Usage>) {
      this.#tokens[key].inc({ adapter }, usage[key]);
    }
    if (usage.cachedPromptTokens > 0) this.#kvReuse.inc({ adapter });
  }
}

/** How summaries yield to routes and answers (hop-priority.ts); totals are the engine's, copied at scrape time. */
function registerPriorityMetrics(priority: () => HopPriorityStats, registers: Registry[]): void {
  new Gauge({
    name: "molmesh_summaries_paused",
    help: "Summary generations paused now for a route or answer on the same engine.",
    registers,
    collect() {
      this.set(priority().paused);
    },
  });
  const total = (name: string, help: string, read: (s: HopPriorityStats) => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(read(priority()));
      },
    });
  total(
    "molmesh_summary_pauses_total",
    "Times a summary paused between tokens for a route or answer.",
    (s) => s.pauses,
  );
  total(
    "molmesh_summary_deferred_seconds_total",
    "Time summaries spent paused for routes and answers.",
    (s) => s.deferredMs / 1000,
  );
  total(
    "molmesh_summary_deferral_limit_total",
    "Summaries paused MOL_SUMMARY_MAX_DEFERRAL_MS in all, which then ran on unpaused.",
    (s) => s.agedOut,
  );
}

export interface MetricsServer {
  /** e.g. `http://127.0.0.1:9464/metrics`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves the registry as Prometheus text on `GET /metrics` (anything else is 404). */
export async function startMetricsServer(
  registry: Registry,
  port: number,
  host: string,
): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      (error: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(`${String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return {
    url: `http://${shownHost}:${address.port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
