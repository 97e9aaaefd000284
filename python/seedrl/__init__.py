"""seedrl's Python side: environments in Python feeding a seedrl learner.

`seedrl.protocol` is the wire protocol (docs/protocol.md) in the standard library (`seedrl.wire`
its specs and errors); `seedrl.actor` steps Gymnasium-style environments (`seedrl.vector`) or
PettingZoo-style turn-based games (`seedrl.players`) for a learner over `seedrl.connection`
(`python -m seedrl.actor --env module:factory` or `--game module:factory`).
Nothing here needs building; numpy is used where an environment hands numpy arrays.
"""

__version__ = "0.4.0"
PROTOCOL_VERSION = 4
