"""The positive control: contaminate a local model on purpose and see which signals catch it.

- `run`: the whole control (split the tasks, fine-tune two doses, sample, audit, separate);
- `finetune`: cheap CPU fine-tuning of a causal LM's top layers on the contaminated half;
- `audit`: the control's audit of models already sampled into its store;
- `separation`: AUROC with its bootstrap interval and the ROC curve's points.
"""
