#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Least privilege: the command never keeps root, root's groups, a capability
# or one of tsarun's file descriptors by accident, and is not confined by
# tsarun's own sandbox.
. "$(dirname "$0")/../lib.sh"
need_root "privilege tests"
cd "$T_TMP"
J=$T_TMP/a.json

# A user with two supplementary groups, made for this test and removed after
# it. Named after this shell's pid: runs of this test at the same time (other
# worktrees on the machine) must not remove each other's user.
U=tsarun-u-$$ G1=tsarun-g1-$$ G2=tsarun-g2-$$
cleanup_user() {
	userdel "$U" 2>/dev/null
	groupdel "$G1" 2>/dev/null
	groupdel "$G2" 2>/dev/null
	return 0
}
# Left by a run that was killed: its pid is gone.
for u in $(getent passwd | cut -d: -f1 | grep '^tsarun-u-[0-9]*$'); do
	kill -0 "${u##*-}" 2>/dev/null && continue
	userdel "$u" 2>/dev/null
	groupdel "tsarun-g1-${u##*-}" 2>/dev/null
	groupdel "tsarun-g2-${u##*-}" 2>/dev/null
done
trap 'cleanup_user; rm -rf "$T_TMP"' EXIT
if ! { groupadd "$G1" && groupadd "$G2" && useradd -M -N -d /nonexistent -s /bin/sh -G "$G1,$G2" "$U"; } 2>"$T_TMP/err"; then
	cannot_run "privilege tests" "cannot create a test user: $(cat "$T_TMP/err")"
fi
uid=$(id -u "$U")
gid=$(id -g "$U")
groups=$(id -G "$U")

# caps PID-STATUS-TEXT: the capability sets of the command, as "CapInh CapPrm CapEff CapAmb".
caps='grep -E "^Cap(Inh|Prm|Eff|Amb):" /proc/self/status | tr -s "\t " " " | cut -d" " -f2 | tr "\n" " "'
nocaps="0000000000000000 0000000000000000 0000000000000000 0000000000000000 "

# --user NAME
equal "--user: the command runs as the user" "$("$TSARUN" -q --json "$J" --user "$U" -- id -u)" "$uid"
equal "--user: with the user's primary group" "$("$TSARUN" -q --json "$J" --user "$U" -- id -g)" "$gid"
equal "--user: with the user's supplementary groups, and no other" \
	"$("$TSARUN" -q --json "$J" --user "$U" -- id -G)" "$groups"
equal "--user: no capability in any set" "$("$TSARUN" -q --json "$J" --user "$U" -- sh -c "$caps")" "$nocaps"
equal "--user: real, effective, saved and filesystem uids are all the user's" \
	"$("$TSARUN" -q --json "$J" --user "$U" -- sh -c 'grep ^Uid: /proc/self/status | cut -f2-')" \
	"$(printf '%s\t%s\t%s\t%s' "$uid" "$uid" "$uid" "$uid")"
equal "--user: the same for the gids" \
	"$("$TSARUN" -q --json "$J" --user "$U" -- sh -c 'grep ^Gid: /proc/self/status | cut -f2-')" \
	"$(printf '%s\t%s\t%s\t%s' "$gid" "$gid" "$gid" "$gid")"
equal "--user by uid" "$("$TSARUN" -q --json "$J" --user "$uid" -- id -G)" "$groups"
equal "--user: HOME and USER are the user's" \
	"$("$TSARUN" -q --json "$J" --user "$U" -- sh -c 'echo $HOME $USER $LOGNAME')" "/nonexistent $U $U"

# Under sudo: the invoking user, with that user's groups, no capabilities.
sudo_run() { SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=$U "$TSARUN" -q --json "$J" "$@"; }
equal "sudo: the command runs as SUDO_UID" "$(sudo_run -- id -u)" "$uid"
equal "sudo: with the user's supplementary groups, not root's" "$(sudo_run -- id -G)" "$groups"
equal "sudo: no capability in any set" "$(sudo_run -- sh -c "$caps")" "$nocaps"
sudo_run -- true
equal "sudo: the artifact belongs to the user" "$(stat -c %u:%g "$J")" "$uid:$gid"
equal "sudo: --user root is honoured, as asked" "$(sudo_run --user root -- id -u)" 0

# A uid without a passwd entry (containers): its ids, and no group of root's.
nouid=54321 nogid=54322
getent passwd $nouid >/dev/null && cannot_run "privilege tests" "uid $nouid has a passwd entry here"
# (Its files are made with its rights: in a directory of its own.)
NJ=$T_TMP/nopw/a.json && mkdir "$T_TMP/nopw" && chown $nouid:$nogid "$T_TMP/nopw"
equal "sudo, uid without a passwd entry: runs as it" \
	"$(SUDO_UID=$nouid SUDO_GID=$nogid "$TSARUN" -q --json "$NJ" -- id -u)" $nouid
equal "sudo, uid without a passwd entry: SUDO_GID is its only group" \
	"$(SUDO_UID=$nouid SUDO_GID=$nogid "$TSARUN" -q --json "$NJ" -- sh -c 'id -g; id -G')" "$nogid
$nogid"
equal "sudo, uid without a passwd entry: no capability" \
	"$(SUDO_UID=$nouid SUDO_GID=$nogid "$TSARUN" -q --json "$NJ" -- sh -c "$caps")" "$nocaps"
SUDO_UID=$nouid "$TSARUN" -q --json "$J" -- true 2>"$T_TMP/err"
equal "sudo, uid without a passwd entry and no SUDO_GID: refused (125)" "$?" 125
check "... saying why" grep -q "SUDO_UID=$nouid has no passwd entry and SUDO_GID is unset" "$T_TMP/err"
# --user with such a uid: that uid and the group of the same number (not
# root's), and no capability.
equal "--user with a uid that has no passwd entry: runs as it, in the group of its number, not root's" \
	"$("$TSARUN" -q --json "$J" --user $nouid -- sh -c 'id -u; id -g; id -G')" "$nouid
$nouid
$nouid"
equal "--user with a uid that has no passwd entry: no capability" \
	"$("$TSARUN" -q --json "$J" --user $nouid -- sh -c "$caps")" "$nocaps"

# Not root: switching users is refused.
setpriv --reuid "$uid" --regid "$gid" --clear-groups "$TSARUN" -q --json /dev/null --user root -- id -u \
	>"$T_TMP/out" 2>"$T_TMP/err"
equal "not root: --user root is refused (125)" "$?" 125
check "not root: ... saying it needs root" grep -q "switching users needs root" "$T_TMP/err"
check "not root: ... and the command did not run" test ! -s "$T_TMP/out"

# File descriptors: the command gets what tsarun was given, none of tsarun's own.
fds='ls /proc/self/fd | sort -n | tr "\n" " "' # ls's own: a shell's change while it runs a pipeline
equal "the command inherits exactly the descriptors it would without tsarun" \
	"$("$TSARUN" -q --json "$J" -- sh -c "$fds" 3<"$J")" "$(sh -c "$fds" 3<"$J")"
equal "... under --user too" "$("$TSARUN" -q --json "$J" --user "$U" -- sh -c "$fds")" "$(sh -c "$fds")"

# The command is not confined: no seccomp filter, no no_new_privs (sudo inside works).
equal "the command has no seccomp filter and may gain privileges" \
	"$("$TSARUN" -q --json "$J" -- sh -c 'grep -E "^(Seccomp|NoNewPrivs):" /proc/self/status | tr -s "\t" " " | tr "\n" " "')" \
	"NoNewPrivs: 0 Seccomp: 0 "

# The command writes where tsarun writes: links it puts there are replaced,
# never followed by root (the artifact, bash.folded), and root reads no file
# through them (the bash fallback's records).
D=$T_TMP/userdir
mkdir "$D" && chown "$U" "$D"
echo "root's own" >"$T_TMP/victim" && chmod 600 "$T_TMP/victim"
"$TSARUN" -q --user "$U" --json "$D/a.json" -- sh -c "ln -sf /dev/full '$D/a.json'"
equal "a link to a device put at the artifact's path: the run succeeds" "$?" 0
check "... and the artifact replaced the link (a regular file)" test -f "$D/a.json" -a ! -L "$D/a.json"
validate "$D/a.json"
"$TSARUN" -q --user "$U" --json "$D/b.json" --bash -c "ln -sf '$T_TMP/victim' '$D/b.bash.folded'; true"
equal "a link put at bash.folded: the run succeeds" "$?" 0
equal "... root's file it pointed to is untouched" "$(cat "$T_TMP/victim")" "root's own"
check "... and bash.folded replaced the link" test -f "$D/b.bash.folded" -a ! -L "$D/b.bash.folded"
# --report, --junit and --markdown likewise: root replaces the link, and the file is the user's.
"$TSARUN" -q --user "$U" --json "$D/c.json" --report "$D/r.txt" -- sh -c "ln -sf '$T_TMP/victim' '$D/r.txt'"
equal "a link put at --report's path: the run succeeds" "$?" 0
equal "... root's file it pointed to is untouched" "$(cat "$T_TMP/victim")" "root's own"
check "... and the report replaced the link, with the table" sh -c "[ -f '$D/r.txt' ] && [ ! -L '$D/r.txt' ] && grep -q TOTAL '$D/r.txt'"
equal "... and belongs to the user, like the artifact" "$(stat -c %U "$D/r.txt")" "$(id -un "$U")"
"$TSARUN" -q --user "$U" --json "$D/c.json" --baseline-cmd true -r 5 --junit "$D/j.xml" --markdown "$D/m.md" -- \
	sh -c "ln -sf '$T_TMP/victim' '$D/j.xml'; ln -sf '$T_TMP/victim' '$D/m.md'"
equal "links put at --junit's and --markdown's paths: root's file they pointed to is untouched" "$(cat "$T_TMP/victim")" "root's own"
check "... and both replaced the links" sh -c "[ -f '$D/j.xml' ] && [ ! -L '$D/j.xml' ] && [ -f '$D/m.md' ] && [ ! -L '$D/m.md' ]"
# A device of its own, not /dev/null: a regression here must not give the machine's away.
mknod "$T_TMP/null" c 1 3 && chmod 666 "$T_TMP/null"
"$TSARUN" -q --user "$U" --json "$D/c.json" --report "$T_TMP/null" --baseline-cmd true -r 5 --junit "$T_TMP/null" -- true
equal "--report and --junit to a device: written in place, and the device stays root's" \
	"$(stat -c '%F %u' "$T_TMP/null")" "character special file 0"
# The pure-bash fallback (the builtin made unloadable): its record file is
# in a directory of the user's; a link there to root's file is not read.
mkdir "$T_TMP/lib" && cp "$REPO/shell/tsarun-env.bash" "$T_TMP/lib/" && echo "not a library" >"$T_TMP/lib/tsarun-trap.so"
# Root's file, in the fallback's own line format (as if it were one): were it
# read, its line would be a command in the profile.
printf '4242 %s 1 1 SECRET-LINE\n' "$(date +%s.%6N)" >"$T_TMP/secret" && chmod 600 "$T_TMP/secret"
TSARUN_BASH_LIBDIR=$T_TMP/lib "$TSARUN" -q --user "$U" --json "$D/c.json" \
	--bash -c "echo one; rm -f \"\$TSARUN_BASH_FALLBACK\"; ln -s '$T_TMP/secret' \"\$TSARUN_BASH_FALLBACK\"; echo two" >/dev/null
equal "the bash fallback's file made a link to root's file: the run succeeds" "$?" 0
equal "... and root's file was not read: no record came from it" "$(jqv "$D/c.json" '.bash.quality.records')" 0
equal "... nor is it in the artifact" "$(grep -c SECRET-LINE "$D/c.json")" 0
