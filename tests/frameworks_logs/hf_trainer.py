"""A tiny Hugging Face Trainer fine-tune (a small BERT built from a config, no download), console as printed.

Usage: python hf_trainer.py {healthy,diverge} OUTDIR
'diverge' uses SGD at a learning rate of 1000 (gradients clipped at norm 1, the default): the loss blows up.
"""

import sys

import numpy as np
import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

mode, outdir = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
rng = np.random.default_rng(0)


def make(n):
    ids = rng.integers(5, 60, size=(n, 16))
    labels = (ids[:, 0] > 32).astype(np.int64)
    return [
        {
            "input_ids": torch.tensor(i),
            "attention_mask": torch.ones(16, dtype=torch.long),
            "labels": torch.tensor(lab),
        }
        for i, lab in zip(ids, labels, strict=True)
    ]


def accuracy(p):
    return {"accuracy": float((p.predictions.argmax(-1) == p.label_ids).mean())}


cfg = BertConfig(
    vocab_size=64,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=64,
    max_position_embeddings=32,
    num_labels=2,
)
args = TrainingArguments(
    output_dir=outdir,
    num_train_epochs=3,
    per_device_train_batch_size=16,
    per_device_eval_batch_size=32,
    learning_rate=3e-3 if mode == "healthy" else 1000.0,
    optim="adamw_torch" if mode == "healthy" else "sgd",
    logging_steps=5,
    eval_strategy="epoch",
    save_strategy="no",
    report_to="none",
    seed=0,
    use_cpu=True,
)
trainer = Trainer(
    model=BertForSequenceClassification(cfg),
    args=args,
    train_dataset=make(320),
    eval_dataset=make(96),
    compute_metrics=accuracy,
)
trainer.train()
metrics = trainer.evaluate()
trainer.log_metrics("eval", metrics)
