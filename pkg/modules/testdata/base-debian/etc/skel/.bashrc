# ~/.bashrc: executed by bash(1) for non-login shells.
alias ls="ls --color=auto"
