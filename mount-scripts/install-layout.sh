# Where kvfs's files go under a prefix; sourced by install.sh and uninstall.sh.
# Usage: layout PREFIX  — sets BIN, MAN1, BASH_COMPLETIONS, ZSH_COMPLETIONS,
# FISH_COMPLETIONS, SYSTEM_UNITS, USER_UNITS (SYSTEM_UNITS empty for a user's
# own prefix: systemd's system units are root's).
#
# Each is a folder where its tool looks without being told:
# - /usr (the Debian package): Debian's own places;
# - /usr/local (root): bash-completion and fish search $XDG_DATA_DIRS
#   (/usr/local/share first), Debian's zsh has /usr/local/share/zsh/site-functions
#   in fpath, systemd reads /usr/local/lib/systemd/{system,user}, and man-db
#   /usr/local/share/man; mount.fuse3 runs kvfs with the shell's default PATH,
#   which has /usr/local/bin (mount(8) starts helpers with an empty environment);
# - ~/.local (anyone else): ~/.local/bin (XDG), bash-completion's
#   $XDG_DATA_HOME/bash-completion, fish's ~/.config/fish/completions,
#   systemd's ~/.config/systemd/user, and man-db finds ~/.local/share/man
#   from ~/.local/bin on PATH; zsh needs the folder added to fpath.
layout() {
    local prefix=$1
    BIN=$prefix/bin
    case $prefix in
        /usr)
            MAN1=/usr/share/man/man1
            BASH_COMPLETIONS=/usr/share/bash-completion/completions
            ZSH_COMPLETIONS=/usr/share/zsh/vendor-completions
            FISH_COMPLETIONS=/usr/share/fish/vendor_completions.d
            SYSTEM_UNITS=/usr/lib/systemd/system
            USER_UNITS=/usr/lib/systemd/user ;;
        "$HOME/.local")
            MAN1=$prefix/share/man/man1
            BASH_COMPLETIONS=${XDG_DATA_HOME:-$HOME/.local/share}/bash-completion/completions
            ZSH_COMPLETIONS=$prefix/share/zsh/site-functions
            FISH_COMPLETIONS=${XDG_CONFIG_HOME:-$HOME/.config}/fish/completions
            SYSTEM_UNITS=
            USER_UNITS=${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user ;;
        *)
            MAN1=$prefix/share/man/man1
            BASH_COMPLETIONS=$prefix/share/bash-completion/completions
            ZSH_COMPLETIONS=$prefix/share/zsh/site-functions
            FISH_COMPLETIONS=$prefix/share/fish/vendor_completions.d
            SYSTEM_UNITS=$prefix/lib/systemd/system
            USER_UNITS=$prefix/lib/systemd/user ;;
    esac
}

# The prefix install.sh and uninstall.sh use when none is given.
default_prefix() {
    if [ "$(id -u)" -eq 0 ]; then echo /usr/local; else echo "$HOME/.local"; fi
}
