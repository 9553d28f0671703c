// `kvfs SYNC_DIR MOUNTPOINT -o OPTIONS` is how mount.fuse3 (fstab, `mount -t
// fuse.kvfs`) runs a FUSE helper; it means `kvfs mount`.
KVFS.run(CommandLineRewrite.rewrite(Array(CommandLine.arguments.dropFirst())))
