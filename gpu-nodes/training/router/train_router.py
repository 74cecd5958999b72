"""Trains l0, the router LoRA, on SmolLM2 and exports it as a llama.cpp LoRA GGUF.

Input is the JSONL that infra/router/render-router-prompts.ts writes: each example's route prompt already
built by the edge's view code and tokenized by the node's tokenizer, so this file knows nothing about the view
format. The loss is the label tokens' cross-entropy after the route cue (the only tokens l0 ever decodes).
The base weights come from the same Q4_1 GGUF the node serves (dequantized by transformers' GGUF loader),
so the adapter is trained against the weights it will run on.
"""

import argparse
import hashlib
import json
import math
import os
import random
import time
from pathlib import Path

import gguf
import numpy as np
import torch
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
    p.add_argument("--layers", type=int, default=30, help="LoRA on the top N transformer layers")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (smoke runs)")
    p.add_argument("--time-budget-s", type=float, default=3000.0, help="stop training after this long")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--predictions", help="write dev/test label probabilities here (JSONL)")
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


def make_batch(batch, label_tokens, pad_id):
    """Right-padded prompt + label tokens, and for each label token the position whose logits predict it."""
    seqs, targets = [], []
    for ex in batch:
        seq = ex["tokens"] + label_tokens[ex["label"]]
        start = len(ex["tokens"])
        seqs.append(seq)
        targets.append([(start - 1 + i, tok) for i, tok in enumerate(label_tokens[ex["label"]])])
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
    rows = torch.tensor([i for i, t in enumerate(targets) for _ in t])
    cols = torch.tensor([pos for t in targets for pos, _ in t])
    gold = torch.tensor([tok for t in targets for _, tok in t])
    return ids, mask, rows, cols, gold


def label_log_probs(model, examples, label_tokens, pad_id, batch_size=32):
    """log P(label) for every label (product over its tokens), per example; the same scoring as the node."""
    names = list(label_tokens)
    out = []
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    with torch.no_grad():
        for i in range(0, len(examples), batch_size):
            chunk = examples[i : i + batch_size]
            scores = torch.zeros((len(chunk), len(names)))
            for j, name in enumerate(names):
                toks = label_tokens[name]
                fake = [dict(ex, label=name) for ex in chunk]
                ids, mask, rows, cols, gold = make_batch(fake, label_tokens, pad_id)
                hidden = inner.model(input_ids=ids, attention_mask=mask).last_hidden_state
                logits = inner.lm_head(hidden[rows, cols]).float()
                lp = torch.log_softmax(logits, dim=-1).gather(1, gold[:, None])[:, 0]
                scores[:, j] = lp.view(len(chunk), len(toks)).sum(dim=1)
            out.extend(torch.log_softmax(scores, dim=-1).tolist())
    return names, out


def evaluate(model, examples, label_tokens, pad_id):
    names, scores = label_log_probs(model, examples, label_tokens, pad_id)
    correct = sum(names[int(np.argmax(s))] == ex["label"] for s, ex in zip(scores, examples))
    return correct / max(1, len(examples)), names, scores


def export_gguf(model, path: str, alpha: float, architecture: str):
    writer = gguf.GGUFWriter(path, architecture)
    writer.add_string("general.type", "adapter")
    writer.add_string("general.name", "l0-router")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", alpha)
    count = 0
    for name, module in model.named_modules():
        if not hasattr(module, "lora_A") or "default" not in module.lora_A:
            continue
        layer = int(name.split(".layers.")[1].split(".")[0])
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
    dev = [e for e in examples if e["split"] == "dev"]
    test = [e for e in examples if e["split"] == "test"]

    base = Path(args.base)
    model = AutoModelForCausalLM.from_pretrained(str(base.parent), gguf_file=base.name, dtype=torch.float32)
    n_layers = model.config.num_hidden_layers
    pad_id = model.config.eos_token_id if isinstance(model.config.eos_token_id, int) else 0
    config = LoraConfig(
        r=args.rank,
        lora_alpha=args.alpha,
        lora_dropout=0.0,
        target_modules=[k.split(".")[-1] for k in GGUF_NAMES],
        layers_to_transform=list(range(n_layers - args.layers, n_layers)),
        bias="none",
    )
    model = get_peft_model(model, config)
    model.print_trainable_parameters()
    inner = model.get_base_model()

    steps_per_epoch = math.ceil(len(train) / args.batch)
    total_steps = max(1, math.ceil(steps_per_epoch * args.epochs))
    if args.max_steps:
        total_steps = min(total_steps, args.max_steps)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    warmup = max(1, total_steps // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: min(1.0, (s + 1) / warmup) * max(0.05, 0.5 * (1 + math.cos(math.pi * s / total_steps))),
    )
    model.train()
    order: list = []
    step = 0
    train_started = time.time()
    while step < total_steps:
        if not order:
            order = train[:]
            random.shuffle(order)
        # Batches of similar length waste little on padding.
        chunk = sorted(order[: args.batch], key=lambda e: len(e["tokens"]))
        order = order[args.batch :]
        ids, mask, rows, cols, gold = make_batch(chunk, label_tokens, pad_id)
        hidden = inner.model(input_ids=ids, attention_mask=mask).last_hidden_state
        logits = inner.lm_head(hidden[rows, cols]).float()
        loss = torch.nn.functional.cross_entropy(logits, gold)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        step += 1
        elapsed = time.time() - train_started
        if step % 10 == 0 or step == total_steps:
            print(f"step {step}/{total_steps} loss {loss.item():.4f} {elapsed:.0f}s", flush=True)
        if elapsed > args.time_budget_s:
            print(f"time budget reached at step {step}", flush=True)
            break
    train_seconds = time.time() - train_started
    model.eval()
    dev_accuracy, names, dev_scores = evaluate(model, dev, label_tokens, pad_id)
    print(f"dev accuracy {dev_accuracy:.4f}", flush=True)
    tensors = export_gguf(model, args.out, args.alpha, "llama")
    if args.predictions:
        _, test_scores = label_log_probs(model, test, label_tokens, pad_id)
        with open(args.predictions, "w", encoding="utf8") as f:
            for ex, s in list(zip(dev, dev_scores)) + list(zip(test, test_scores)):
                probs = {n: math.exp(v) for n, v in zip(names, s)}
                f.write(json.dumps({"id": ex["id"], "split": ex["split"], "label": ex["label"], "probs": probs}) + "\n")
    summary = {
        "baseSha256": sha256_file(args.base),
        "promptsSha256": sha256_file(args.prompts),
        "hyperparameters": {
            "rank": args.rank,
            "alpha": args.alpha,
            "lr": args.lr,
            "epochs": args.epochs,
            "batch": args.batch,
            "layers": args.layers,
            "targetModules": list(GGUF_NAMES),
            "seed": args.seed,
            "steps": step,
            "loss": "label tokens after the route cue",
        },
        "trainExamples": len(train),
        "devAccuracyTorch": dev_accuracy,
        "trainSeconds": round(train_seconds, 1),
        "totalSeconds": round(time.time() - started, 1),
        "tensors": tensors,
        "stack": {"torch": torch.__version__, "peft": __import__("peft").__version__, "gguf": "0.19.0"},
    }
    print("SUMMARY " + json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
