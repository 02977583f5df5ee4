"""Zoom-Zero, host-free: zoom planning (Eq. 3), the response template's parser, prompts, rewards, TokenAdv and the
EasyR1 batch reward file. Imports only itself and the shared core."""
