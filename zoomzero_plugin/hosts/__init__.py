"""Plugin hosts: the only code that knows a trainer's internals. :mod:`.easyr1` is EasyR1's, :mod:`.verl` verl's
(0.9); neither imports the other. What both need lives here, below them:

- :mod:`.seams`: a declared place where a host wraps a trainer's (or vLLM's) name, and one host's table of them;
  :mod:`.post_import` applies a seam when its module is imported;
- :mod:`.machine`: what a doctor says about the machine (versions, vLLM's build, GPUs) and one line per seam;
- :mod:`.switches`: CPU mode's environment flag and one switched recipe setting, printed one line each;
- :mod:`.options`: a recipe's plugin sections (``zoom``, ``tokenadv``, ``agent``, the reward's own) read into one
  options object per recipe, the same keys and meanings on both hosts.
"""
