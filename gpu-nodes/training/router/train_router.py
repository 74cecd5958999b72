"""Trains l0, the router LoRA, on SmolLM2 and exports it as a llama.cpp LoRA GGUF.

Input is the JSONL that test/bench/routing/render-router-prompts.ts writes: each example's route prompt already
built by the edge's view code and tokenized by the node's tokenizer, so this file knows nothing about the view
format. The loss is the label tokens' cross-entropy after the route cue (the only tokens l0 ever decodes).
The base weights come from the same GGUF the node serves (dequantized by transformers' GGUF loader),
so the adapter is trained against the weights it will run on.

Two CPU cores cannot run a 135M model forward and backward over the corpus in an hour, so the LoRA sits on the
top --layers layers only: the frozen layers below are run once per example, without gradients, and their
output is cached (the router's system line, the prefix every prompt shares, once for all); training then runs
only the top layers, fed those states as inputs_embeds. That is exact, not an approximation: with no adapter
below, the lower layers compute the same states on every step.
"""

import argparse
import copy
import hashlib
import json
import math
import os
import random
import time
from pathlib import Path

import gguf
import numpy as np
import peft
import torch
import transformers
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

# PEFT module name -> llama.cpp tensor name. q/k are left out on purpose: the GGUF stores them row-permuted
# for its RoPE layout, so their lora_b would need the same permutation; v, o and the MLP need none.
GGUF_NAMES = {
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--prompts", required=True)
    p.add_argument("--base", required=True, help="the base GGUF the node serves")
    p.add_argument("--out", required=True, help="the adapter GGUF to write")
    p.add_argument("--rank", type=int, default=8)
    p.add_argument("--alpha", type=float, default=16.0)
    p.add_argument("--lr", type=float, default=4e-4)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--layers", type=int, default=3, help="LoRA on the top N transformer layers")
    p.add_argument("--encode-budget-s", type=float, default=900.0, help="lower-layer encoding stops after this long")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (smoke runs)")
    p.add_argument("--time-budget-s", type=float, default=3000.0, help="stop training after this long")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--check", type=int, default=0, help="write the PyTorch label probabilities of N dev examples")
    p.add_argument("--check-out", default="check.jsonl")
    p.add_argument(
        "--states-cache",
        default="",
        help="file of lower-layer states kept between runs, keyed by base, layer split and each suffix's tokens",
    )
    return p.parse_args()


def load_prompts(path: str):
    labels, examples = None, []
    with open(path, encoding="utf8") as f:
        for line in f:
            row = json.loads(line)
            if row["kind"] == "labels":
                labels = row["labels"]
            else:
                examples.append(row)
    assert labels is not None, "the prompts file has no labels line"
    return labels, examples


def common_prefix(examples) -> int:
    """Tokens every prompt starts with (the router's system line): their lower-layer states are computed once."""
    first = examples[0]["tokens"]
    n = len(first)
    for ex in examples[1:]:
        t = ex["tokens"]
        m = 0
        while m < min(n, len(t)) and t[m] == first[m]:
            m += 1
        n = m
    # The last prompt token always belongs to the example, so every example has a suffix.
    return max(0, min(n, min(len(e["tokens"]) for e in examples) - 1))


class LowerLayers:
    """The frozen base below the first adapted layer: hidden states of each example, prefix shared."""

    def __init__(self, model, n_lower: int, prefix: list, threads: int):
        self.inner = model.model
        self.layers = self.inner.layers
        self.norm = self.inner.norm
        self.n_lower = n_lower
        self.prefix = prefix
        self._truncate()
        with torch.no_grad():
            out = self.inner(input_ids=torch.tensor([prefix]), use_cache=True)
        self.prefix_hidden = out.last_hidden_state[0].clone()
        self.prefix_cache = out.past_key_values
        self._restore()

    def _truncate(self):
        self.inner.layers = self.layers[: self.n_lower]
        self.inner.norm = torch.nn.Identity()

    def _restore(self):
        self.inner.layers = self.layers
        self.inner.norm = self.norm

    def run(self, suffixes: list) -> list:
        """Lower-layer outputs for each suffix (the tokens after the shared prefix)."""
        self._truncate()
        try:
            width = max(len(s) for s in suffixes)
            ids = torch.full((len(suffixes), width), 0, dtype=torch.long)
            mask = torch.zeros((len(suffixes), len(self.prefix) + width), dtype=torch.long)
            mask[:, : len(self.prefix)] = 1
            for i, s in enumerate(suffixes):
                ids[i, : len(s)] = torch.tensor(s)
                mask[i, len(self.prefix) : len(self.prefix) + len(s)] = 1
            cache = copy.deepcopy(self.prefix_cache)
            cache.batch_repeat_interleave(len(suffixes))
            with torch.no_grad():
                out = self.inner(input_ids=ids, attention_mask=mask, past_key_values=cache, use_cache=True)
            return [out.last_hidden_state[i, : len(s)].to(torch.float16).clone() for i, s in enumerate(suffixes)]
        finally:
            self._restore()


class StatesCache:
    """Lower-layer states from earlier runs: the frozen layers give the same states for the same tokens, so a
    rerun (other hyperparameters, a grown corpus) encodes only what it has not seen. Keyed by the base's sha256,
    the layer split and the shared prefix; each entry by its suffix's tokens."""

    def __init__(self, path: str, base_sha: str, n_lower: int, prefix: list):
        self.path = path
        self.key = hashlib.sha256(json.dumps([base_sha, n_lower, prefix]).encode()).hexdigest()
        self.entries = {}
        if path and os.path.exists(path):
            saved = torch.load(path)
            if saved.get("key") == self.key:
                self.entries = saved["entries"]

    @staticmethod
    def entry_key(suffix: list) -> str:
        return hashlib.sha1(json.dumps(suffix).encode()).hexdigest()

    def get(self, suffix: list):
        return self.entries.get(self.entry_key(suffix))

    def put(self, suffix: list, state) -> None:
        self.entries[self.entry_key(suffix)] = state

    def save(self) -> None:
        if self.path:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            torch.save({"key": self.key, "entries": self.entries}, self.path + ".tmp")
            os.replace(self.path + ".tmp", self.path)


def length_batches(examples: list, states: dict, batch: int) -> list:
    """One epoch of batches: shuffled, then length-sorted within windows of a few batches, the batches shuffled
    again. A random batch pads every example to its longest (a 500-token hostile message beside 40-token ones);
    grouping by length keeps the sample random while the padding, most of a step's cost, stays small."""
    order = examples[:]
    random.shuffle(order)
    window = batch * 8
    batches = []
    for w in range(0, len(order), window):
        ranked = sorted(order[w : w + window], key=lambda e: states[e["id"]].shape[0])
        batches.extend(ranked[i : i + batch] for i in range(0, len(ranked), batch))
    random.shuffle(batches)
    return batches


def build_top_model(model, n_lower: int):
    """A model of the top layers alone, fed the lower layers' states as inputs_embeds: same weights, shared."""
    config = copy.deepcopy(model.config)
    config.num_hidden_layers = model.config.num_hidden_layers - n_lower
    if getattr(config, "layer_types", None):
        config.layer_types = config.layer_types[n_lower:]
    top = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    top.model.layers = torch.nn.ModuleList(model.model.layers[n_lower:])
    top.model.norm = model.model.norm
    top.lm_head = model.lm_head
    top.model.embed_tokens = model.model.embed_tokens
    return top


def top_batch(batch, states, prefix_hidden, label_tokens):
    """inputs_embeds of prefix + suffix states, and where each gold label token is predicted."""
    P = prefix_hidden.shape[0]
    width = P + max(states[ex["id"]].shape[0] for ex in batch)
    embeds = torch.zeros((len(batch), width, prefix_hidden.shape[1]))
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    rows, cols, gold = [], [], []
    for i, ex in enumerate(batch):
        st = states[ex["id"]].float()
        embeds[i, :P] = prefix_hidden
        embeds[i, P : P + st.shape[0]] = st
        mask[i, : P + st.shape[0]] = 1
        prompt_len = len(ex["tokens"])
        for j, tok in enumerate(label_tokens[ex["label"]]):
            rows.append(i)
            cols.append(prompt_len - 1 + j)
            gold.append(tok)
    return embeds, mask, torch.tensor(rows), torch.tensor(cols), torch.tensor(gold)


def export_gguf(model, path: str, alpha: float, layer_offset: int):
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_string("general.type", "adapter")
    writer.add_string("general.name", "l0-router")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", alpha)
    count = 0
    for name, module in model.named_modules():
        if not hasattr(module, "lora_A") or "default" not in module.lora_A:
            continue
        layer = layer_offset + int(name.split(".layers.")[1].split(".")[0])
        suffix = ".".join(name.split(".layers.")[1].split(".")[1:])
        base = f"blk.{layer}.{GGUF_NAMES[suffix]}.weight"
        # numpy (r, n_in) is ggml [n_in, r]; (n_out, r) is [r, n_out]: the layout llama.cpp reads.
        a = module.lora_A["default"].weight.detach().float().numpy()
        b = module.lora_B["default"].weight.detach().float().numpy()
        writer.add_tensor(f"{base}.lora_a", a.astype(np.float32))
        writer.add_tensor(f"{base}.lora_b", b.astype(np.float32))
        count += 1
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return count


def full_label_probs(model, ex, label_tokens) -> dict:
    """P(label) normalised over the labels, each the product of its tokens' probabilities: the node's scoring."""
    scores = {}
    with torch.no_grad():
        for name, toks in label_tokens.items():
            ids = torch.tensor([ex["tokens"] + toks])
            logp = torch.log_softmax(model(input_ids=ids, use_cache=False).logits[0].float(), dim=-1)
            start = len(ex["tokens"]) - 1
            scores[name] = sum(logp[start + j, t].item() for j, t in enumerate(toks))
    top = max(scores.values())
    total = sum(math.exp(v - top) for v in scores.values())
    return {k: math.exp(v - top) / total for k, v in scores.items()}


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    torch.set_num_threads(args.threads)
    started = time.time()
    label_tokens, examples = load_prompts(args.prompts)
    train = [e for e in examples if e["split"] == "train"]
    random.shuffle(train)

    base = Path(args.base)
    model = AutoModelForCausalLM.from_pretrained(str(base.parent), gguf_file=base.name, dtype=torch.float32)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    n_layers = model.config.num_hidden_layers
    n_lower = n_layers - args.layers
    prefix_len = common_prefix(examples)
    lower = LowerLayers(model, n_lower, train[0]["tokens"][:prefix_len], args.threads)
    print(f"shared prefix {prefix_len} tokens; LoRA on layers {n_lower}..{n_layers - 1}", flush=True)

    # Lower-layer states until the encode budget is spent: the examples encoded are a random sample of the train
    # split (it was shuffled), so a budget cut keeps the label mix. Within each window of a few batches the
    # examples are length-sorted, so a batch pads little (context examples are twice as long); the budget is
    # checked only at a window's end, since a cut inside one would keep its shorter, context-free examples.
    states = {}
    encode_started = time.time()
    suffix_of = lambda e: (e["tokens"] + label_tokens[e["label"]][:-1])[prefix_len:]  # noqa: E731
    cache = StatesCache(args.states_cache, sha256_file(args.base), n_lower, train[0]["tokens"][:prefix_len])
    for ex in train:
        cached = cache.get(suffix_of(ex))
        if cached is not None:
            states[ex["id"]] = cached
    cached_count = len(states)
    print(f"{cached_count} examples' states from the cache", flush=True)
    todo = [e for e in train if e["id"] not in states]
    window = args.batch * 4
    for w in range(0, len(todo), window):
        sorted_window = sorted(todo[w : w + window], key=lambda e: len(e["tokens"]))
        for i in range(0, len(sorted_window), args.batch):
            chunk = sorted_window[i : i + args.batch]
            suffixes = [suffix_of(e) for e in chunk]
            for ex, suffix, st in zip(chunk, suffixes, lower.run(suffixes)):
                states[ex["id"]] = st
                cache.put(suffix, st)
        elapsed = time.time() - encode_started
        print(f"encoded {len(states)}/{len(train)} {elapsed:.0f}s", flush=True)
        if elapsed > args.encode_budget_s:
            break
    encoded = [e for e in train if e["id"] in states]
    encode_seconds = time.time() - encode_started
    if len(states) > cached_count:
        cache.save()
    print(f"encoded {len(encoded)} examples in {encode_seconds:.0f}s", flush=True)

    top = build_top_model(model, n_lower)
    config = LoraConfig(
        r=args.rank,
        lora_alpha=args.alpha,
        lora_dropout=0.0,
        target_modules=[k.split(".")[-1] for k in GGUF_NAMES],
        bias="none",
    )
    top = get_peft_model(top, config)
    top.print_trainable_parameters()
    inner = top.get_base_model()

    steps_per_epoch = math.ceil(len(encoded) / args.batch)
    total_steps = max(1, math.ceil(steps_per_epoch * args.epochs))
    if args.max_steps:
        total_steps = min(total_steps, args.max_steps)
    params = [p for p in top.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    warmup = max(1, total_steps // 20)
    top.train()
    batches: list = []
    step = 0
    train_started = time.time()
    while step < total_steps:
        if not batches:
            batches = length_batches(encoded, states, args.batch)
        chunk = batches.pop()
        embeds, mask, rows, cols, gold = top_batch(chunk, states, lower.prefix_hidden, label_tokens)
        hidden = inner.model(inputs_embeds=embeds, attention_mask=mask, use_cache=False).last_hidden_state
        logits = inner.lm_head(hidden[rows, cols]).float()
        loss = torch.nn.functional.cross_entropy(logits, gold)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad()
        step += 1
        elapsed = time.time() - train_started
        # Cosine decay over whichever runs out first, the steps or the time budget, after a linear warmup.
        progress = min(1.0, max(step / total_steps, elapsed / args.time_budget_s))
        factor = min(1.0, (step + 1) / warmup) * max(0.05, 0.5 * (1 + math.cos(math.pi * progress)))
        for group in optimizer.param_groups:
            group["lr"] = args.lr * factor
        if step % 10 == 0 or step == total_steps:
            print(f"step {step}/{total_steps} loss {loss.item():.4f} {elapsed:.0f}s", flush=True)
        if elapsed > args.time_budget_s:
            print(f"time budget reached at step {step}", flush=True)
            break
    train_seconds = time.time() - train_started
    top.eval()
    if args.check:
        # The full model now runs the adapted layers (they are shared with `top`): its label probabilities for
        # a few dev examples let the export be checked against llama.cpp loading the GGUF.
        dev = [e for e in examples if e["split"] == "dev"][: args.check]
        with open(args.check_out, "w", encoding="utf8") as f:
            for ex in dev:
                f.write(json.dumps({"id": ex["id"], "probs": full_label_probs(model, ex, label_tokens)}) + "\n")
    top.save_pretrained(str(Path(args.out).with_suffix("")) + "-peft")
    tensors = export_gguf(top, args.out, args.alpha, n_lower)
    summary = {
        "baseSha256": sha256_file(args.base),
        "promptsSha256": sha256_file(args.prompts),
        "hyperparameters": {
            "rank": args.rank,
            "alpha": args.alpha,
            "lr": args.lr,
            "epochs": args.epochs,
            "batch": args.batch,
            "adaptedLayers": list(range(n_lower, n_layers)),
            "targetModules": list(GGUF_NAMES),
            "seed": args.seed,
            "steps": step,
            "loss": "cross-entropy of the label tokens after the route cue",
        },
        "trainExamplesAvailable": len(train),
        "trainExamplesUsed": len(encoded),
        "encodeSeconds": round(encode_seconds, 1),
        "encodeCachedExamples": cached_count,
        "trainSeconds": round(train_seconds, 1),
        "totalSeconds": round(time.time() - started, 1),
        "tensors": tensors,
        "stack": {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__},
    }
    print("SUMMARY " + json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
