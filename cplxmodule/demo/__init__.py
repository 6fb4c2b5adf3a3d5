"""The demo: sparsifying a complex-valued CNN that recognises digital modulations.

``python -m cplxmodule.demo`` generates the task (:mod:`cplxmodule.demo.data`),
trains :class:`~cplxmodule.demo.model.ModulationNet`, then its variational
dropout twin and its masked twin (:mod:`cplxmodule.demo.pipeline`), and
prints a table of accuracy and compression.
"""
