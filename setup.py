"""Packaging beyond pyproject.toml: yamls/ and examples/ stay at the top of the repository (where the docs
and the product card put them) and ship inside the package as ``zoomzero_plugin/yamls`` and
``zoomzero_plugin/examples``, so a wheel installed outside a clone still has every recipe and example."""

from setuptools import find_packages, setup

SHIPPED = {"zoomzero_plugin.yamls": "yamls", "zoomzero_plugin.examples": "examples"}  # see zoomzero_plugin/shipped.py

setup(
    packages=find_packages(include=["zoomzero_plugin", "zoomzero_plugin.*"]) + list(SHIPPED),
    package_dir=SHIPPED,
    package_data={
        "zoomzero_plugin": ["py.typed"],
        "zoomzero_plugin.yamls": ["*.yaml"],
        "zoomzero_plugin.examples": ["*.sh"],
    },
)
