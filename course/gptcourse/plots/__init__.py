"""The course's pictures, one module per part of the course. Import them from here, as the
notebooks do (``from gptcourse.plots import plot_attention``); every name below is re-exported.

- ``text_data``: chapter 01, a text as its tokens, sliding windows, position encodings;
- ``attention``: chapters 02 and 03, attention weights, several heads, the causal mask, dropout;
- ``gpt_model``: chapter 04, the architecture with its tensor shapes, LayerNorm, activation
  functions, gradients with and without shortcuts, parameter counts, next-token probabilities;
- ``pretraining``: chapter 05, target probabilities, loss curves, the learning-rate schedule,
  gradient clipping, training runs compared, the speed of each step;
- ``sampling``: chapter 06, draws against probabilities, temperature, top-k / top-p, the
  KV-cache mask, time per generated token;
- ``classification``: chapters 07 and 08, messages per class, lengths in tokens, loss and
  accuracy while fine-tuning, the confusion matrix, how much a low-rank approximation keeps;
- ``instruction``: chapter 09, a collated batch, the scores of the model's responses;
- ``style``: what several chapters share (the figure width, common colours, small helpers).

Every helper accepts PyTorch tensors (on any device, with or without gradients) or NumPy
arrays, draws with matplotlib and seaborn, and returns the matplotlib object it drew on,
so you can add titles or save it. None of them calls ``plt.show()``: Jupyter shows the
figure at the end of the cell, and scripts decide for themselves.
"""

from .style import BAR_COLOUR, MAX_FIGURE_WIDTH, TRAIN_COLOUR, UNIFORM_COLOUR, VAL_COLOUR
from .text_data import (
    INPUT_COLOUR, MAX_TOKENS_SHOWN, MAX_WINDOW_TOKENS, POSITION_COLOURS, STRIP_COLOUR, TARGET_COLOUR,
    TOKEN_BOX_COLOURS, VISIBLE_WHITESPACE, plot_position_encoding_heatmap, plot_position_encoding_lines,
    plot_sliding_windows, plot_token_boundaries)
from .attention import (
    ATTENTION_COLOURS, DROPPED_COLOUR, DROPPED_MARK_COLOUR, HIDDEN_COLOUR, MASKED_COLOUR, VISIBLE_COLOUR,
    plot_attention, plot_attention_heads, plot_causal_mask, plot_dropout_effect)
from .gpt_model import (
    ACTIVATION_COLOURS, ARCH_COLOURS, MAX_TOP_TOKENS, NO_SHORTCUT_COLOUR, ROW_COLOURS, SHORTCUT_COLOUR,
    plot_activation_functions, plot_gpt_architecture, plot_gradient_magnitudes, plot_layernorm_effect,
    plot_next_token_probabilities, plot_parameter_counts)
from .pretraining import (
    AFTER_COLOUR, BEFORE_COLOUR, RUN_COLOURS, WARMUP_COLOUR, plot_gradient_norms_per_step,
    plot_gradient_norms_per_tensor, plot_learning_rate, plot_losses, plot_runs_compared, plot_speed_steps,
    plot_target_probabilities)
from .sampling import (
    CACHED_KEY_COLOUR, CUMULATIVE_COLOUR, FUTURE_COLOUR, MAX_CACHE_POSITIONS, MAX_SAMPLING_TOKENS,
    NEW_KEY_COLOUR, OUTSIDE_HIDDEN_COLOUR, OUTSIDE_VISIBLE_COLOUR, PROBABILITY_COLOUR, REMOVED_COLOUR,
    SAMPLE_COLOUR, TIMING_COLOURS, plot_kv_cache_mask, plot_kv_cache_masks, plot_samples_vs_probabilities,
    plot_sorted_probabilities, plot_temperature_distributions, plot_time_per_token, plot_why_this_token)
from .classification import (
    CLASS_COLOURS, CONFUSION_COLOURS, CONTEXT_COLOUR, PADDED_COLOUR, SET_COLOURS, confusion_counts,
    plot_class_balance, plot_classifier_training, plot_confusion_matrix, plot_rank_energy,
    plot_token_lengths, rank_energy)
from .instruction import (
    BATCH_END_COLOUR, BATCH_IGNORED_COLOUR, BATCH_PADDING_COLOUR, BATCH_TOKEN_COLOUR, MAX_ANNOTATED_BATCH,
    MAX_ANNOTATED_LENGTH, MEAN_COLOUR, SCORE_COLOUR, plot_collated_batch, plot_response_scores)
