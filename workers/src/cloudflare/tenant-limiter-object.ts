import { DurableObject } from "cloudflare:workers";
import {
  admitTenantRequest,
  admitTenantWrite,
  createTenantLimitState,
  recordTenantTokens,
  refundTenantRequest,
  refundTenantWrite,
  type Admission,
  type TenantLimitSettings,
  type TenantLimitState,
} from "../limits/tenant-limits.ts";
import { edgeConfigOf, type Env } from "./env.ts";

const LIMIT_KEYS = [
  "requestsPerMinute",
  "tokensPerMinute",
  "monthlyTokens",
] as const satisfies readonly (keyof TenantLimitSettings)[];
const STATE_KEY = "limits";
const OVERRIDES_KEY = "overrides";
/**
 * One tenant's request and token buckets and its monthly usage. A Durable Object, not the rate-limit binding:
 * that one is per location and approximate, and quotas must hold exactly across the world.
 */
export class TenantLimiterObject extends DurableObject<Env> {
  /**
   * The buckets and overrides, read once and then kept here: this object is their only writer, and every turn calls
   * it twice (admit, record), so two storage reads a call were a fixed cost on each request.
   */
  #state: TenantLimitState | undefined;
  #overrides: Partial<TenantLimitSettings> = {};

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.#state = await ctx.storage.get<TenantLimitState>(STATE_KEY);
      this.#overrides = (await ctx.storage.get<Partial<TenantLimitSettings>>(OVERRIDES_KEY)) ?? {};
    });
  }

  async admit(): Promise<Admission> {
    return await this.#update((state, settings, now) => {
      const { state: next, admission } = admitTenantRequest(state, settings, now);
      return { next, result: admission };
    });
  }

  async admitWrite(): Promise<Admission> {
    return await this.#update((state, settings, now) => {
      const { state: next, admission } = admitTenantWrite(state, settings, now);
      return { next, result: admission };
    });
  }

  async refund(): Promise<void> {
    await this.#update((state, settings, now) => ({
      next: refundTenantRequest(state, settings, now),
      result: undefined,
    }));
  }

  async refundWrite(): Promise<void> {
    await this.#update((state, settings, now) => ({
      next: refundTenantWrite(state, settings, now),
      result: undefined,
    }));
  }

  async record(tokens: number): Promise<void> {
    if (!(tokens > 0)) return;
    await this.#update((state, settings, now) => ({
      next: recordTenantTokens(state, settings, tokens, now),
      result: undefined,
    }));
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: its callers hold a Promise-typed stub
  async readLimits(): Promise<TenantLimitSettings> {
    return this.#settings();
  }

  async setLimits(
    overrides: Partial<Record<keyof TenantLimitSettings, number | null>>,
  ): Promise<TenantLimitSettings> {
    const stored = this.#overrides;
    const next: Partial<TenantLimitSettings> = {};
    // A key the call names replaces the stored one; null (or an explicit undefined from an RPC caller) clears
    // it, so the default applies again.
    for (const key of LIMIT_KEYS) {
      const value = key in overrides ? overrides[key] : stored[key];
      if (value !== null && value !== undefined) next[key] = value;
    }
    this.#overrides = next;
    await this.ctx.storage.put(OVERRIDES_KEY, next);
    return this.#settings();
  }

  /** Change, then write: no await before the change, so concurrent calls cannot interleave. */
  async #update<T>(
    change: (
      state: TenantLimitState,
      settings: TenantLimitSettings,
      now: number,
    ) => { next: TenantLimitState; result: T },
  ): Promise<T> {
    const settings = this.#settings();
    const now = Date.now();
    const { next, result } = change(this.#state ?? createTenantLimitState(settings, now), settings, now);
    this.#state = next;
    await this.ctx.storage.put(STATE_KEY, next);
    return result;
  }

  #settings(): TenantLimitSettings {
    // The deployment's defaults (MOL_DEFAULT_*, checked in config/edge-config.ts), under this tenant's overrides.
    return { ...edgeConfigOf(this.env).limits, ...this.#overrides };
  }
}
