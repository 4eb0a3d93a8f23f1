"""The contracts layer, below the wiring: state and record types with their conversions, run
settings, the plan and the pure organizer, runtime helpers and the judgements nodes share.
Nodes import from here, never from each other."""
