"""Learning from runs (seed 004): what agent memory writes without anyone calling memory_store.

- ``learner``: follows the journal's run boundaries; learns from each finished run;
- ``extraction``: facts from a run (utility model, or the labelled offline rules);
- ``suggestions``: facts into memories or the suggestions queue, deduplicated,
  contradictions as supersede suggestions; accept/reject; skills;
- ``capture``: which turns become procedures; ``masking``: what they must not keep;
- ``procedures``: recording, recall (task similarity), scoring, deletion, retention;
- ``episodes``: a run's episode, handed to one function;
- ``credentials``: a run's credentials, in memory only;
- ``store``: the SQL; ``service``: the operations behind the RPCs;
  ``conversions``/``servicer``: the gRPC LearningService.
"""
