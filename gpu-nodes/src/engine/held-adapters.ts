import {
  BadRequestError,
  UnknownAdapterError,
  adapterIdSchema,
  type AdapterId,
} from "../../../schema/wire/v2/index.ts";
import { adapterNameMatches, type AdapterName } from "../../../schema/wire/v2/adapter-name.ts";
import type { EngineAdapterInfo, EngineLoadAdapterRequest } from "./engine.ts";

/** What an engine keeps per adapter revision; `info.name` keys it. */
export interface HeldRevision {
  readonly info: EngineAdapterInfo;
}

/** A request's claim on a revision: unloading the revision waits until every claim is released. */
export interface RevisionClaim<R extends HeldRevision> {
  readonly revision: R;
  release(): void;
}

interface Entry<R> {
  revision: R;
  claims: number;
  /** Set once the revision is retired: called when its last claim is released. */
  onDrained: (() => void) | undefined;
}

/** A load request's label and scale, checked (`bad_request`). */
export function readLoadRequest(request: EngineLoadAdapterRequest): { label: AdapterId; scale: number } {
  const label = adapterIdSchema.safeParse(request.label);
  if (!label.success) throw new BadRequestError(`"${request.label}" is not an adapter label`);
  const scale = request.scale ?? 1;
  if (!Number.isFinite(scale)) throw new BadRequestError(`LoRA scale must be a finite number, got ${scale}`);
  return { label: label.data, scale };
}

/**
 * What loading a revision held already returns: the held one, since its name stands for its weights. At another
 * scale it would not, so that is refused (`bad_request`) until the revision is unloaded.
 */
export function reloadHeld(held: EngineAdapterInfo, heldScale: number, scale: number): EngineAdapterInfo {
  if (heldScale !== scale) {
    throw new BadRequestError(
      `${held.name} is held at scale ${heldScale}: a revision's name stands for one set of weights, ` +
        "unload it before loading it at another scale",
    );
  }
  return held;
}

/** Splits `label@rev` without throwing: a malformed name is simply held by no one. */
function labelOf(requested: string): AdapterId | undefined {
  const at = requested.indexOf("@");
  const label = at < 0 ? requested : requested.slice(0, at);
  return adapterIdSchema.safeParse(label).success ? label : undefined;
}

/**
 * The adapter revisions an engine holds, in load order, and which one a request runs on. A versioned name
 * (`chat@0123abcd…`, a prefix of the revision's hex is enough) runs on that revision or is refused; a bare label
 * runs on the label's default revision, the oldest one still held: loading a canary revision never moves
 * bare-label traffic, and unloading the default hands it to the next oldest.
 *
 * Retiring a revision refuses new requests for it at once; requests that already claimed it keep it until they
 * release it, and {@link HeldAdapters.drained} says when the last one has, so its memory can be freed.
 */
export class HeldAdapters<R extends HeldRevision> {
  /** Map iteration is insertion order: the load order that picks each label's default. */
  readonly #held = new Map<AdapterName, Entry<R>>();
  readonly #retired = new Map<R, Entry<R>>();

  /** The revisions held now, oldest load first. */
  list(): R[] {
    return [...this.#held.values()].map((entry) => entry.revision);
  }

  /** The revision a request for `requested` (label or versioned name) runs on now. */
  resolve(requested: string): R | undefined {
    const label = labelOf(requested);
    if (label === undefined) return undefined;
    const bare = label === requested;
    for (const { revision } of this.#held.values()) {
      if (revision.info.id !== label) continue;
      if (bare || adapterNameMatches(requested, revision.info.name)) return revision;
    }
    return undefined;
  }

  /** Exactly the revision named `name`, as {@link add} stored it. */
  get(name: AdapterName): R | undefined {
    return this.#held.get(name)?.revision;
  }

  add(revision: R): void {
    if (this.#held.has(revision.info.name)) throw new Error(`${revision.info.name} is already held`);
    this.#held.set(revision.info.name, { revision, claims: 0, onDrained: undefined });
  }

  /** Claims the revision `requested` resolves to, or refuses with `unknown_adapter`. */
  claim(requested: string, refusal: string): RevisionClaim<R> {
    const revision = this.resolve(requested);
    const entry = revision && this.#held.get(revision.info.name);
    if (!entry) throw new UnknownAdapterError(`adapter "${requested}" ${refusal}`);
    entry.claims += 1;
    let released = false;
    return {
      revision: entry.revision,
      release: () => {
        if (released) return;
        released = true;
        entry.claims -= 1;
        if (entry.claims === 0) entry.onDrained?.();
      },
    };
  }

  /**
   * Stops the revision `name` names from taking new requests and returns it. `name` must be versioned: a bare
   * label would unload whichever revision happens to be the default (`bad_request`).
   */
  retire(name: string): R {
    if (labelOf(name) === name) {
      throw new BadRequestError(`unload names a revision ("${name}@<rev>"), not a bare label`);
    }
    const revision = this.resolve(name);
    const entry = revision && this.#held.get(revision.info.name);
    if (!entry) throw new UnknownAdapterError(`adapter "${name}" is not loaded on this node`);
    this.#held.delete(entry.revision.info.name);
    this.#retired.set(entry.revision, entry);
    return entry.revision;
  }

  /** Resolves once no request holds the retired `revision` any longer. */
  drained(revision: R): Promise<void> {
    const entry = this.#retired.get(revision);
    if (!entry) return Promise.resolve();
    const forget = (): void => void this.#retired.delete(revision);
    if (entry.claims === 0) {
      forget();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      entry.onDrained = () => {
        forget();
        resolve();
      };
    });
  }
}
