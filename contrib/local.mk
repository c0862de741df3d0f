# `make install` for a system instance (docs/design.md section 10): the
# systemd units, the sysusers.d and tmpfiles.d entries that make the
# service user, the client group and the directories, the example
# policies and the logrotate snippet.  Each directory follows the prefix
# except the systemd ones, which configure takes from systemd's pkg-config
# file (--with-systemdsystemunitdir=, --with-sysusersdir=,
# --with-tmpfilesdir=; "no" skips one).

# The examples are data, not documentation: sp check and the package test
# read them, and a system installed without /usr/share/doc keeps them.
examplesdir = $(pkgdatadir)/examples
dist_examples_DATA = contrib/examples/demo.json contrib/examples/design.json \
	contrib/examples/http-readonly.json contrib/examples/ssh-ops.json
# The root variant of the service (contrib/systemd/README.md), for the
# operator to copy into /etc/systemd/system/sallyport@.service.d/.
dist_pkgdata_DATA += contrib/systemd/sallyport-root.conf

# A conffile under $(sysconfdir): /etc/logrotate.d with --sysconfdir=/etc.
logrotatedir = $(sysconfdir)/logrotate.d
dist_logrotate_DATA = contrib/logrotate/sallyport

if HAVE_SYSTEMDSYSTEMUNITDIR
# The shipped services name /usr/local/bin/sp (the default prefix); the
# installed ones name the sp this install puts in $(bindir).  The metrics
# timer is installed, not enabled (debian/rules, contrib/systemd/README.md).
systemdsystemunit_DATA = contrib/systemd/sallyport.socket \
	systemd/sallyport@.service \
	systemd/sallyport-metrics.service \
	contrib/systemd/sallyport-metrics.timer
endif
systemd/sallyport@.service: $(top_srcdir)/contrib/systemd/sallyport@.service Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	sed 's|^ExecStart=/usr/local/bin/sp |ExecStart=$(bindir)/sp |' \
	    $(top_srcdir)/contrib/systemd/sallyport@.service >$@.tmp && \
	grep -q '^ExecStart=$(bindir)/sp mcp ' $@.tmp && mv $@.tmp $@
# Its sp is inside the shell's command: the one word "sp metrics" changes.
systemd/sallyport-metrics.service: $(top_srcdir)/contrib/systemd/sallyport-metrics.service Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	sed '/^ExecStart=/s| /usr/local/bin/sp metrics | $(bindir)/sp metrics |' \
	    $(top_srcdir)/contrib/systemd/sallyport-metrics.service >$@.tmp && \
	grep -q '^ExecStart=.* $(bindir)/sp metrics ' $@.tmp && mv $@.tmp $@
CLEANFILES += systemd/sallyport@.service systemd/sallyport@.service.tmp \
	systemd/sallyport-metrics.service systemd/sallyport-metrics.service.tmp
EXTRA_DIST += contrib/systemd/sallyport-metrics.service \
	contrib/systemd/sallyport-metrics.timer

if HAVE_SYSUSERSDIR
sysusers_DATA = contrib/sysusers.d/sallyport.conf
endif
if HAVE_TMPFILESDIR
tmpfiles_DATA = contrib/tmpfiles.d/sallyport.conf
endif
EXTRA_DIST += contrib/sysusers.d/sallyport.conf contrib/tmpfiles.d/sallyport.conf

# distcheck installs into a scratch prefix, as an unprivileged build
# would: the systemd directories follow it there.
AM_DISTCHECK_CONFIGURE_FLAGS += \
	--with-systemdsystemunitdir='$${dc_install_base}/lib/systemd/system' \
	--with-sysusersdir='$${dc_install_base}/lib/sysusers.d' \
	--with-tmpfilesdir='$${dc_install_base}/lib/tmpfiles.d'

# The package's sources and its test travel with the tarball.
EXTRA_DIST += contrib/debian-check debian/changelog debian/control \
	debian/copyright debian/rules debian/sallyport.postrm debian/source/format

# A measure for clean-ups (file count, function lengths); nothing runs it.
EXTRA_DIST += contrib/code-stats
