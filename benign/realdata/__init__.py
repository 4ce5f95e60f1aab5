"""The real-data protocol of the paper (Table 2/6, Figures 8/9): noisy-label fine-tuning of the last attention layer
of a pretrained Transformer, online with the paper's data sets and backbones, offline with assets packages ship.

One module per job, imports flowing one way (each imports only those above it):

- `sources`: where things come from (the hub, files inside installed packages), and failing at once offline;
- `datasets`: the data sets, their fixed splits, the seeded subsets and the label noise;
- `image_backbone`: the small ViT pre-trained here (its recipe, data and record);
- `firsttoken`: the last layer at the first token for many runs at once, forward and backward by hand — the
  step phase 2 repeats;
- `reach`: which flipped labels any query and key could fit: free attention scores and single tokens, through the
  same frozen rest of the last layer;
- `backbones`: a pretrained BERT or ViT, frozen, with its last layer's parts as plain tensors;
- `training`: the frozen layers run once (`encode`), the optimizer and schedule, phase 1 and phase 2;
- `reference`: the literal reference, phase 2 through the whole Hugging Face model;
- `runs`: the `Protocol`, the tasks and the cache of finished runs;
- `report`: tables, curves, differences from the paper and the numbers the pages quote.
"""
