# ~/.profile
if [ -n "$BASH_VERSION" ]; then . "$HOME/.bashrc"; fi
