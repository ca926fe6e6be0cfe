"""The PDF numbers theorems, definitions and exercises as the site does, and its references to exercises resolve.

Two repairs for the LaTeX builder only:

* sphinx-jupyterbook-latex sets ``numfig_secnum_depth = 2`` when the table of contents has parts, so that
  numbers carry the chapter. In this book a chapter's section numbers already start with the chapter, so depth 2
  printed "Theorem 1.1.1" and "Exercise 1.11.1" where the site prints "Theorem 1.1" and "Exercise 1.1". Depth 1
  (Sphinx's default, which the HTML build uses) gives the site's numbers.
* sphinx-exercise labels an exercise in LaTeX as ``exercise:<label>`` without a counter, while Sphinx writes a
  reference to it as ``\\ref{<docname>:<label>}``: every "Exercise N" reference printed "Exercise ??". After the
  exercise's own label we add ``<docname>:<label>``, carrying the exercise's number as its ``\\ref`` text
  (the macro ``\\dpmiaexlabel`` is defined in ``_config.yml``'s LaTeX preamble).
"""
from __future__ import annotations


def _builder_inited(app) -> None:
    if app.builder.format != "latex":
        return
    app.config.numfig_secnum_depth = 1

    from sphinx_exercise import nodes as ex_nodes
    from sphinx_exercise.utils import get_node_number

    def visit(self, node):
        # before the admonition: its title is the argument that follows \begin{sphinxadmonition}{note}
        number = get_node_number(self, node, "exercise")
        target = self.idescape(f"{node.get('docname')}:{node.attributes['label']}")
        self.body.append(rf"\dpmiaexlabel{{{number}}}{{{target}}}" + "\n")
        ex_nodes.visit_exercise_enumerable_node(self, node)

    app.registry.add_translation_handlers(ex_nodes.exercise_enumerable_node,
                                          latex=(visit, ex_nodes.depart_exercise_enumerable_node))


def setup(app):
    app.connect("builder-inited", _builder_inited, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
