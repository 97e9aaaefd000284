"""seedrl's Python side: environments in Python feeding a seedrl learner.

`seedrl.protocol` is the wire protocol (docs/protocol.md) in the standard library; `seedrl.actor`
steps Gymnasium-style environments for a learner (`python -m seedrl.actor --env module:factory`).
Nothing here needs building; numpy is used where an environment hands numpy arrays.
"""

__version__ = "0.4.0"
PROTOCOL_VERSION = 4
