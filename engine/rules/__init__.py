"""The rules of Go: board kernels, the game record, rulesets and scoring, pass-alive areas,
seki, ladders and handicap placement. Imports nothing of the engine outside this package."""
