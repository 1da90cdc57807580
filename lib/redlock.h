/*
 * redlock.h: the lock engine behind the redlock command.
 *
 * Locks live in Redis in Redisson's key layout and are changed only by the
 * Lua scripts in lua/, one EVALSHA per operation. This library never
 * prints and never exits: every call returns an enum rl_err and leaves a
 * one-line description on the client (rl_errstr).
 */
#ifndef REDLOCK_H
#define REDLOCK_H

#include <stddef.h>
#include <stdint.h>

#define RL_VERSION "0.1.0"
/* How the scripts (rl_not_lock in lua/prelude.lua) name a hash at NAME
 * that has not the shape of a lock, before what is in it. */
#define RL_NOT_LOCK "hash that is not a lock"

enum rl_err {
	RL_OK = 0,
	RL_EUSAGE,	/* bad argument: URL, duration, name */
	RL_ECONNECT,	/* server unreachable or connection lost */
	RL_EAUTH,	/* authentication or SELECT refused */
	RL_EWRONGTYPE,	/* a key of the lock holds another type */
	RL_ESERVER,	/* the server refused for its own reasons: out of
			 * memory, cluster down, a disabled command */
	RL_EPROTO,	/* unexpected reply: a fault of redlock's */
	RL_EINTR,	/* the interrupt descriptor became readable */
	RL_EREPLICAS,	/* acquired (renewed), but too few replicas
			 * acknowledged it (rl_set_replicas); an
			 * acquisition was released again */
	RL_ENOMEM,
	RL_EKIND	/* NAME is another kind (a semaphore, a lock): the
			 * message says which, and what to do instead */
};

/* Durations: bare (fractional) seconds, or parts NUMBER UNIT with the
 * units d, h, m, s and ms, largest first, each once, a fraction in the
 * last part only ("250ms", "30s", "1h30m", "1d12h", "1.5h"), up to
 * RL_DURATION_MAX (87840h, ten years of 366 days). Returns 0, -1 when S
 * is not a duration (*MS untouched), or RL_DURATION_TOO_LONG. */
#define RL_DURATION_MAX (10LL * 366 * 24 * 3600 * 1000)
#define RL_DURATION_TOO_LONG (-2)
int rl_duration_parse(const char *s, int64_t *ms);
/* Format MS for people: "850ms", "12.3s", "4m05s", "2h03m", "3d04h". */
void rl_duration_format(int64_t ms, char *buf, size_t len);

/* Stored bytes to show (rl_text.c): anyone who can write the database
 * writes them. The length of the valid UTF-8 sequence at P
 * (NUL-terminated): 1 for ASCII, 0 for a byte that starts none (a stray
 * continuation byte, an overlong form, a surrogate, beyond U+10FFFF, a
 * sequence cut short). */
size_t rl_utf8_len(const unsigned char *p);
/* S for a terminal or a log into BUF (LEN bytes, 16 at least, else ""):
 * each byte of a control character (C0, DEL, C1) and each byte that is
 * not part of valid UTF-8 as \xNN, other UTF-8 as it is, a backslash as
 * itself; cut at a character with "..." when it does not fit. BUF. */
char *rl_escape(const char *s, char *buf, size_t len);
/* Whether S is a decimal integer from 0 to INT64_MAX, digits only (no
 * sign, no blank): 0 with its value in *V, else -1. */
int rl_decimal(const char *s, int64_t *v);

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t rl_now_ms(void);

/* A sentinel's address. */
struct rl_hostport {
	char *host;
	int port;
};

#define RL_SENTINEL_PORT 26379

/* Connection targets. */
struct rl_url {
	char *host;	/* TCP host, NULL for a unix socket */
	int port;
	char *path;	/* unix socket path, NULL for TCP */
	char *user;	/* ACL user, NULL for the default user */
	char *password;	/* NULL: no AUTH */
	int db;
	int tls;	/* rediss:// */
	/* redis+sentinel://: the master is asked of the sentinels by name
	 * at every connect; host and path are NULL. */
	char *master;	/* the master's name; NULL: not through Sentinel */
	struct rl_hostport *sentinels;
	size_t nsentinels;
	char *sentinel_user;	/* AUTH to the sentinels (not in the URL) */
	char *sentinel_password;
};

#define RL_DEFAULT_URL "redis://127.0.0.1:6379"

/* TLS for rediss:// URLs: the options of redis-cli. */
struct rl_tls_opts {
	const char *cacert;	/* CA bundle (PEM); default: the system's */
	const char *cacertdir;	/* directory of hashed CA certificates */
	const char *cert;	/* client certificate, for mutual TLS */
	const char *key;	/* its private key */
	const char *sni;	/* server name to send and to verify */
	int insecure;		/* verify neither certificate nor name */
};

/* Load OpenSSL's libssl and set up TLS for every rediss:// connection of
 * this process: 0, -1 with why in ERR (a file that cannot be read, a key
 * that does not match its certificate), or RL_TLS_NOLIB (libssl cannot be
 * loaded). Without it, the first rediss:// connection sets up TLS with
 * the system's CA certificates. */
#define RL_TLS_NOLIB (-2)
int rl_tls_setup(const struct rl_tls_opts *o, char *err, size_t errlen);

/* The libraries under redlock, for --version: hiredis's version as built
 * ("0.14.1"), and OpenSSL's as loaded for rediss:// ("OpenSSL 3.0.17 1 Jul
 * 2025"), NULL when libssl cannot be loaded. */
const char *rl_hiredis_version(void);
const char *rl_tls_version(void);

/* Parse S into U. On failure returns -1 and describes why in ERR. */
int rl_url_parse(const char *s, struct rl_url *u, char *err, size_t errlen);
/* Decode %XX escapes in S, in place; -1 on a bad escape or %00. */
int rl_unescape(char *s);
/* The URL again, without its password: safe to print and to export. */
int rl_url_format(const struct rl_url *u, char *buf, size_t len);
/* A deep copy of U into D: 0, or -1 when out of memory (D cleared). */
int rl_url_copy(struct rl_url *d, const struct rl_url *u);
void rl_url_clear(struct rl_url *u);

/* Owner tokens: a random UUID (getrandom) and ":" and the pid. */
#define RL_OWNER_MAX 64
int rl_owner_new(char *buf, size_t len);

/* The holder's user name without NSS's first-call cost (getpwuid takes
 * 60-90 us in a fresh process, a thirtieth of an uncontended exec).
 * rl_passwd_name: from TEXT, a passwd(5) file of LEN bytes, the name of
 * the first entry for UID (comments and compat mode's "+" and "-"
 * entries left out) into BUF; 0, or -1 when there is none, BUF is too
 * short, or an entry before it is not read as glibc would surely read
 * it (seven fields, a name, a uid and gid of digits).
 * rl_nss_files_first: whether TEXT, an nsswitch.conf(5) of LEN bytes,
 * has NSS look users up in files first (the first source of its
 * passwd line is files, with no action after it, or it has no passwd
 * line), so that the first entry there is what getpwuid returns. */
int rl_passwd_name(const char *text, size_t len, unsigned long uid,
    char *buf, size_t buflen);
int rl_nss_files_first(const char *text, size_t len);

/* Redisson's key names: "PREFIX:{NAME}", or "PREFIX:NAME" when NAME
 * already contains "{". Returns a malloc'd string or NULL. */
char *rl_key(const char *prefix, const char *name);
/* The other way round, Redisson's suffixName: "{NAME}:SUFFIX", or
 * "NAME:SUFFIX" when NAME already contains "{"; without SUFFIX (NULL),
 * "{NAME}" or "NAME". Returns a malloc'd string or NULL. */
char *rl_key_suffix(const char *name, const char *suffix);
/* The lock names whose key "PREFIX:..." is KEY, malloc'd into NAMES:
 * "PREFIX:{x}" is the key of both "x" and "{x}", "PREFIX:a{b}" of "a{b}"
 * only, "PREFIX:x" of none. Returns how many (0 to 2), -1 when out of
 * memory. */
int rl_key_names(const char *prefix, const char *key, size_t keylen,
    char *names[2]);

#define RL_PREFIX_CHANNEL "redisson_lock__channel"
#define RL_PREFIX_QUEUE "redisson_lock_queue"
#define RL_PREFIX_TIMEOUT "redisson_lock_timeout"
#define RL_PREFIX_TOKEN "redisson_lock_token"
#define RL_PREFIX_HOLDER "redlock_holder"
#define RL_PREFIX_WAITER "redlock_waiter"
#define RL_PREFIX_ROOM "redlock_room"
#define RL_PREFIX_LISTENER "redlock_listener"
#define RL_PREFIX_WRITER "redlock_writer"
#define RL_PREFIX_RWLOCK "redisson_rwlock"
#define RL_PREFIX_LOG "redlock_log"
/* The ACL channel rule that lets a user wake and wait for every lock. */
#define RL_ACL_CHANNELS "&" RL_PREFIX_CHANNEL ":*"

/* A connection to one server, or to several masters for Redlock. */
typedef struct rl_client rl_client;
struct rl_status;

rl_client *rl_client_new(const struct rl_url *u, int64_t connect_timeout_ms,
    int64_t timeout_ms);

/* Redlock: one lock across N independent masters (N <= 16). Every
 * operation runs on all of them in parallel (non-blocking connects,
 * pipelined script calls, one poll), each with the node timeout, and
 * needs a quorum of N/2+1. */
rl_client *rl_client_new_multi(const struct rl_url *urls, size_t n,
    int64_t connect_timeout_ms, int64_t timeout_ms);
size_t rl_nodes(const rl_client *c);
/* How long a master may take to answer (default: rl_node_timeout_for()
 * of a 30s lease). */
void rl_set_node_timeout(rl_client *c, int64_t ms);
/* After each acquisition and renewal, WAIT for N replicas of each master
 * to acknowledge it, within the client's timeout (0: do not wait). The
 * WAIT goes in the same write as the script, its reply in the same
 * round. An acquisition too few acknowledged is released and fails with
 * RL_EREPLICAS; a renewal too few acknowledged has failed (and is retried
 * as when a master does not answer). With several masters, a master whose
 * replicas fell short does not count towards the quorum. N below 0
 * (RL_REPLICAS_DEFAULT): on masters found through Sentinel, WAIT for one
 * replica where the connection, when it opened, found some (the
 * sentinels' list, or ROLE's; none: no WAIT, and a refused WAIT does not
 * hold the master back), so that a master the sentinels have replaced,
 * which its replicas have left, grants and renews nothing; elsewhere, no
 * WAIT. */
#define RL_REPLICAS_DEFAULT (-1)
void rl_set_replicas(rl_client *c, int n);
/* How long a plain or --limit waiter stays in the room (the waiters a
 * release wakes one of) without refreshing its place; it refreshes it
 * every MS (the listener: every MS/3). RL_WAITER_TIMEOUT_MS unless set
 * (MS <= 0: that default again); RL_EUSAGE above RL_WAITER_TIMEOUT_MAX_MS,
 * which bounds a fair waiter's timeout too (rl_try_acquire): a killed
 * waiter keeps its place, the room's listener its role, no longer than
 * that, and the room's keys expire within three times that. */
#define RL_WAITER_TIMEOUT_MS 5000
#define RL_WAITER_TIMEOUT_MAX_MS (3600LL * 1000)
enum rl_err rl_set_waiter_timeout(rl_client *c, int64_t ms);
/* --min-hold: each acquisition from now on records the end of a minimum
 * hold, MS after it on the server's clock (0: none), and a release of its
 * last hold before then leaves it in place, finished, with its lease set
 * to what is left (rl_release: A->held_until_ms), whoever gives it back
 * (the holder, another process with its token); rl_force_release removes
 * it at once. A finished hold is not renewed. RL_EUSAGE above
 * RL_MIN_HOLD_MAX_MS. */
#define RL_MIN_HOLD_MAX_MS (24LL * 3600 * 1000)
enum rl_err rl_set_min_hold(rl_client *c, int64_t ms);
/* History (the stream redlock_log:{NAME}): acquisitions, releases,
 * lost leases, forced removals, expiries and waiters that gave up are
 * recorded by the scripts that do them, about the last MAX per name (0:
 * none recorded), the stream expiring between TTL_MS and twice that
 * after the last acquisition or event off the hot path (0: never).
 * RL_EUSAGE for MAX below 0 or above RL_HISTORY_MAX_MAX. */
#define RL_HISTORY_MAX 100
#define RL_HISTORY_MAX_MAX 100000
#define RL_HISTORY_TTL_MS (7LL * 24 * 3600 * 1000)
enum rl_err rl_set_history(rl_client *c, int64_t max, int64_t ttl_ms);
/* COMMAND's exit status (or 128+N), which the next release records;
 * -1: none; -2: none known, but a release that finds the hold gone
 * records it lost (a watchdog's). */
void rl_set_exit_status(rl_client *c, int status);
/* Which pub/sub releases wake waiters with, and waiters listen to: both
 * sides of a name must use the same, or neither hears the other. */
enum rl_pubsub {
	RL_PUBSUB_AUTO = 0,	/* sharded (SPUBLISH, SSUBSCRIBE) on a Redis 7
				 * or newer cluster node, as HELLO tells;
				 * classic (PUBLISH, SUBSCRIBE) elsewhere */
	RL_PUBSUB_SHARDED,	/* sharded wherever: a server without it
				 * (older than Redis 7) fails each
				 * connection with RL_ESERVER before any
				 * command of the caller's runs there */
	RL_PUBSUB_CLASSIC	/* classic wherever, clusters too */
};
/* Before the client's first connection (the default is auto). With
 * sharded, a new connection waits for HELLO's answer before it sends
 * anything else; with classic, it sends no HELLO. */
void rl_set_pubsub(rl_client *c, enum rl_pubsub mode);
/* Eviction: with ON, each command connection the client opens from now
 * on asks INFO memory in its first write, behind the handshake and
 * HELLO, and reads the answer before the first reply that is the
 * caller's: no round trip of its own. Before rl_connect, for the
 * connections that acquire. */
void rl_set_eviction_check(rl_client *c, int on);
/* What master I's connection learnt so (once a round has had its reply
 * there): its maxmemory-policy when the server may evict a held lock
 * (a maxmemory set, or not said, and any policy but noeviction:
 * allkeys-* evicts any key, volatile-* any key with an expiry, which
 * every lease is), with the server's URL (no password) in URL; NULL
 * when it may not, or INFO was refused (an ACL) or has not answered. */
const char *rl_node_eviction(const rl_client *c, size_t i, char *url,
    size_t urllen);
/* ttl/100 clamped to 5..50 ms. */
int64_t rl_node_timeout_for(int64_t ttl_ms);
size_t rl_quorum(size_t n);
/* What is left of a lease of TTL_MS acquired in ELAPSED_MS, after the
 * drift; <= 0 means not acquired. */
int64_t rl_validity_ms(int64_t ttl_ms, int64_t elapsed_ms);

/* Per master, after rl_status on several: the URL (no password), its own
 * view of the lock, or why it did not answer (NULL when it did). */
int rl_node_status(rl_client *c, size_t i, struct rl_status *st,
    char *url, size_t urllen, const char **err);
enum rl_err rl_connect(rl_client *c);
/* Before rl_connect: its connecting, the handshake (AUTH, HELLO)
 * included, ends by UNTIL_MS (rl_now_ms's clock; -1: only the connect
 * timeout bounds it), so that -w bounds the whole call. */
void rl_set_connect_until(rl_client *c, int64_t until_ms);
/* After rl_connect: what it went on without, for a line with -v; NULL
 * when nothing. A password was given, but the server has none and
 * refused AUTH for that, so the connections go on without AUTH. */
const char *rl_connect_note(rl_client *c);
const char *rl_errstr(const rl_client *c);
/* The last error is a server's refusal, in its words with what to do (a
 * cluster moving a slot, a server loading): no hint to add. */
int rl_err_refused(const rl_client *c);
/* The ACL user the client logs in as ("default" without one). */
const char *rl_user(const rl_client *c);
/* A descriptor that interrupts waits with RL_EINTR once readable
 * (a self-pipe for signals), a reply or connection of rl_acquire's in
 * flight included; -1 for none. */
void rl_set_interrupt_fd(rl_client *c, int fd);
/* In a child process that takes C over after fork(2): its TLS
 * connections are let go (nothing is written on them) and reopened on
 * first use, as a TLS session's state cannot be shared by two processes;
 * plain connections are kept. */
void rl_client_forked(rl_client *c);
/* The masters the client's last acquisition never went to, a bit each in
 * the order of its URLs; and the same given to another client of the
 * same URLs (exec's parent, giving back the hold of a watchdog that
 * died): a release or undo leaves them out, where a count of the same
 * owner's would be another hold's (an outer one). */
uint32_t rl_client_away(const rl_client *c);
void rl_client_set_away(rl_client *c, uint32_t away);
/* Close every connection: the next call connects afresh (and asks the
 * sentinels again). Replies still due are not waited for; only for
 * callers that sent nothing whose order matters, such as reads. */
void rl_client_disconnect(rl_client *c);
void rl_client_free(rl_client *c);

/* The kinds of lock: each has its scripts, channels and heartbeat in a
 * constant table of operations (rl_kind.c). */
enum rl_lock_kind {
	RL_EXCLUSIVE,	/* Redisson's RLock layout (the default) */
	RL_SHARED,	/* a read lock of Redisson's RReadWriteLock */
	RL_WRITE,	/* its write lock */
	RL_PERMIT	/* one of LIMIT permits of a semaphore, Redisson's
			 * RPermitExpirableSemaphore */
};

/* A hold: lock NAME taken by OWNER as KIND (LIMIT: the permits of
 * RL_PERMIT, which only taking one needs). Every call that takes,
 * renews, releases or keeps a hold is given its handle; the client keeps
 * no kind. Any kind but RL_EXCLUSIVE on several masters is RL_EUSAGE, so
 * is taking a permit of a LIMIT below 1. Permits have no fair queue
 * (rl_acquire with FAIR is RL_EUSAGE); a permit's id is 16 bytes, as
 * Redisson's: a redlock owner token's UUID (so tokens that differ only
 * in their pid share a permit), or 16 bytes of any other token's SHA-1;
 * status shows it in hex, as Redisson does. A waiting writer announces
 * itself: no new reader of redlock's comes in meanwhile (Redisson's
 * readers still do); so does a waiting RL_EXCLUSIVE caller (fair or not)
 * that finds the name held in read mode (rl_acquire). */
struct rl_lock {
	const char *name;
	const char *owner;
	enum rl_lock_kind kind;
	long limit;
	int reenter;	/* only re-enter a hold that OWNER has of NAME (a
			 * nested call of an exec that holds it): where it
			 * has none, nothing is taken and the attempt is
			 * not acquired, with rl_attempt's gone set */
};

/* Who the holder is, recorded next to the lock for status. */
/* Where a holder's process runs, as its holder record says: the boot id
 * (/proc/sys/kernel/random/boot_id) and pid namespace (the link
 * /proc/self/ns/pid) of the host that took the hold, and whether a
 * process renews its lease (exec's watchdog, lock --keepalive). NULL and
 * 0 where not recorded (Redisson's holders, an older redlock's). */
struct rl_proc {
	const char *boot;
	const char *pidns;
	int renewed;
};

struct rl_meta {
	const char *host;
	long pid;
	const char *user;
	const char *cmd;
	struct rl_proc proc;	/* recorded with the hold */
};

/* What an acquisition attempt found. Strings point into the client and
 * stay valid until its next call. */
struct rl_attempt {
	int acquired;
	int64_t sent_ms;	/* when the attempt was sent (CLOCK_MONOTONIC) */
	int64_t fence;		/* acquired: fencing token */
	int64_t holds;		/* acquired: hold count (> 1: re-entered) */
	int64_t pttl;		/* busy: lease left in ms, -1 when none */
	const char *owner;	/* busy: holder's owner token */
	const char *host;	/* busy: holder's host, pid, ... if recorded */
	long pid;
	const char *cmd;
	const char *user;	/* forced: the removed holder's user */
	int64_t held_ms;	/* busy: how long it has been held, -1 unknown */
	int64_t position;	/* fair, asked for: place in the queue, 1 first */
	int64_t queued;		/* fair: waiters in the queue */
	int64_t head_wait_ms;	/* fair, lock free: until its head is evicted */
	int rejoined;		/* fair: evicted earlier, queued again at the tail */
	size_t nodes_ok;	/* several masters: how many granted it */
	int confirmed;		/* released: a quorum of masters gave back
				 * the caller's hold (its others may not
				 * have answered in time) */
	int too_slow;		/* several masters: a quorum granted it, but no
				 * validity was left (ttl - elapsed - drift) */
	int64_t validity_ms;	/* several masters: what was left of the lease */
	int64_t ahead;		/* fair, not acquired: waiters ahead of the
				 * caller; -1 unknown */
	const char *nopub;	/* acquired or released: the channel this user
				 * may not PUBLISH on (ACL), so releases wake
				 * nobody; NULL when it may or it is unknown */
	const char *skipped;	/* acquired: why the server refused to record
				 * it in the history (ACL, a key of another
				 * type, out of memory); NULL when recorded */
	const char *badkey;	/* RL_EWRONGTYPE: the key and its type */
	const char *badtype;
	const char *lost;	/* waiting: why the server (every master) is
				 * out of reach while the wait reconnects;
				 * NULL when it is not */
	int listen;		/* busy, waiting: the caller is the room's
				 * listener (it hears the name's channel) */
	int announced;		/* busy, waiting: new readers of redlock's
				 * wait behind the caller (an exclusive
				 * waiter of a name held in read mode) */
	int64_t held_until_ms;	/* busy: the holder's hold is finished
				 * (--min-hold) and stays until then;
				 * released: the release left it so (server
				 * clock, ms since the epoch); 0: neither */
	int foreign;		/* several masters, busy: a master's holder
				 * keeps no holder record of redlock's (a
				 * Java client's lock there), whatever the
				 * others granted */
	int superseded;		/* waiting with rl_request's supersede: a
				 * newer waiter superseded this one (on any
				 * master), named by these: */
	const char *by_owner, *by_host, *by_cmd;
	long by_pid;
	int lapsed;		/* superseded, but by nobody known: this
				 * waiter's record was gone (it made no
				 * call for longer than the record lasts),
				 * and a mark left for it may have gone with
				 * it; by_* are NULL */
	int gone;		/* rl_lock's reenter: OWNER holds nothing of
				 * NAME to re-enter (its hold was removed,
				 * expired or lost); nothing was taken */
};

/* Fair (FIFO) acquisition: waiters queue on the server and refresh their
 * deadline every waiter_timeout/3 while they wait. */
struct rl_fair {
	int64_t waiter_timeout_ms;
	int want_position;	/* report the place in the queue (O(n) LPOS) */
	int plain;		/* queued, but taking a free lock as a plain
				 * lock does (rl_acquire: a plain waiter
				 * behind a holder that is not redlock's) */
};

enum rl_join {
	RL_JOIN_NO,		/* do not queue when busy (-n) */
	RL_JOIN_YES,		/* queue at the tail when busy */
	RL_JOIN_AGAIN		/* queued before: being absent means evicted */
};

/* One attempt: lock L for its owner, with a lease of TTL_MS, by the
 * caller META describes, in fair queue FAIR (NULL for a plain lock),
 * joining the waiters when busy as JOIN says. */
struct rl_try {
	const struct rl_lock *l;
	int64_t ttl_ms;
	const struct rl_meta *meta;
	const struct rl_fair *fair;
	enum rl_join join;
};

/* One attempt, one round trip. */
enum rl_err rl_try_acquire(rl_client *c, const struct rl_try *t,
    struct rl_attempt *a);

/* Called after each busy attempt while waiting, and about once a second
 * in between with the lease and hold times advanced locally (no round
 * trip); a non-zero return stops the wait (reported as busy). */
typedef int (*rl_wait_cb)(void *arg, const struct rl_attempt *a);

/* What an acquisition asks for (rl_acquire, rl_acquire_any). */
struct rl_request {
	const struct rl_lock *l;	/* the hold wanted; rl_acquire_any:
					 * N of them */
	size_t n;		/* rl_acquire_any: holds in L (rl_acquire
				 * takes L[0] alone) */
	int64_t ttl_ms;
	int64_t wait_ms;	/* < 0: forever, 0: one attempt */
	const struct rl_meta *meta;
	const struct rl_fair *fair;	/* NULL for a plain lock */
	int supersede;		/* --supersede: it (an exclusive lock's,
				 * fair or not) supersedes the older waiters
				 * of its name that wait with it on: they
				 * leave the queue and the room and stop
				 * waiting (rl_acquire: A->superseded);
				 * waiting, it is one of them */
	rl_wait_cb cb;		/* NULL: none */
	void *cbarg;
};

/* Acquire RQ's hold L, waiting up to WAIT_MS (< 0: forever, 0: one
 * attempt). A waiter of an exclusive lock or a permit joins the name's
 * room on the server (a fair waiter: its queue) and subscribes to its
 * own channel, which a release publishes on to wake one waiter; the
 * room's listener (the head of the queue) to the name's channel as well,
 * where every release publishes (a redlock reader's last release too); a
 * waiter of a read-write lock to the name's channels. An exclusive
 * waiter held up by readers announces itself to them as a writer does,
 * for its waiter timeout, renewed every third of it, and takes that back
 * when it stops waiting.
 * It retries on each message, when the lease it was told runs out, and
 * at its heartbeat (rl_set_waiter_timeout, or the fair waiter timeout).
 * Once waiting, a lost connection is not the end: subscriptions and
 * attempts that fail with RL_ECONNECT are retried with backoff (polling
 * the interrupt fd, each connect bounded by the time left), and every
 * subscription regained is followed by an attempt; when WAIT_MS runs out
 * meanwhile, the result is "not acquired" with A->lost saying why.
 * WAIT_MS bounds the whole call, against a server that never answers
 * too: a reply due when it runs out is given up on 250 ms later, and
 * the way out gets 250 ms; a first attempt so given up on is
 * RL_ECONNECT. Once the interrupt fd is readable, a round in flight is
 * given up on at once, the way out gets what is left of 100 ms, and the
 * result is RL_EINTR unless acquired.
 * Other errors end the wait at once. A waiter that stops waiting without
 * the lock leaves the queue or the room. */
enum rl_err rl_acquire(rl_client *c, const struct rl_request *rq,
    struct rl_attempt *a);

/* A pool: acquire any one of RQ's N holds L[i] (1 to RL_ANY_MAX), each
 * through a client of its own C[i] (all different; the same servers or
 * not), whichever is free first. A first attempt on each in turn, until
 * one is acquired; when none is (and WAIT_MS is not 0), the wait of
 * rl_acquire on every one of them at once, in one poll: a waiter in each
 * name's room (FAIR: in each name's queue), subscribed to each name's
 * channels, woken by whichever release comes first; the names woken are
 * tried in the pool's order. Once one is acquired, or the wait is over,
 * the others' waits leave their rooms or queues. *WHICH: the hold
 * acquired, or the one whose client says what failed, or (busy) 0; A[i]:
 * what the last attempt on L[i] found. CB is shown the last attempt
 * made (one of A). */
#define RL_ANY_MAX 64
enum rl_err rl_acquire_any(rl_client *const *c, const struct rl_request *rq,
    struct rl_attempt *a, size_t *which);

/* Take OWNER out of the fair queue of NAME; *POSITION: the place it had
 * (1 first), 0 when it was not queued or the server cannot tell. */
enum rl_err rl_leave(rl_client *c, const char *name, const char *owner,
    int64_t *position);

enum rl_release {
	RL_RELEASED,	/* last hold given back, waiters woken */
	RL_DECREMENTED,	/* holds remain */
	RL_NOT_OWNER	/* the owner does not hold the lock */
};

/* Give back one hold. *HOLDS: holds left (RL_DECREMENTED), or 1 when
 * someone else holds it, 0 when free (RL_NOT_OWNER). A->nopub is set when
 * the lock was released but its waiters could not be woken. */
enum rl_err rl_release(rl_client *c, const struct rl_lock *l,
    enum rl_release *r, int64_t *holds, struct rl_attempt *a);
/* The same for a hold that was never used (exec's COMMAND never started,
 * lock's token was never printed): its minimum hold is not kept. */
enum rl_err rl_release_unused(rl_client *c, const struct rl_lock *l,
    enum rl_release *r, int64_t *holds, struct rl_attempt *a);

/* Delete lock NAME (KIND: any but RL_PERMIT), or semaphore NAME with
 * all its permits (RL_PERMIT), whoever holds it; *DELETED says whether
 * one was held; A->nopub as for rl_release; A->owner, host, pid, user, cmd and held_ms:
 * the holder removed, where known. Its history records BY (host, pid,
 * user) as who removed it. */
enum rl_err rl_force_release(rl_client *c, const char *name,
    enum rl_lock_kind kind, const struct rl_meta *by, int *deleted,
    struct rl_attempt *a);

/* One event of a name's history (rl_log_read). Strings point into the
 * client and stay valid until its next call; "" when not recorded. */
struct rl_event {
	char id[48];		/* the stream entry's id, "MS-SEQ" */
	int64_t time_ms;	/* when, on the server's clock */
	const char *event;	/* acquired, released, lost, forced, expired,
				 * gave_up, busy (did not wait), superseded */
	const char *owner, *host, *user, *cmd, *fence;
	const char *kind;	/* read, write, permit; "" for a plain lock */
	long pid;		/* 0: not known */
	int64_t wait_ms;	/* -1: not known */
	int64_t hold_ms;	/* -1: not known */
	int exit_status;	/* COMMAND's (128+N: signal N); -1 unknown */
	int64_t until_ms;	/* released before the end of its --min-hold:
				 * that end (it holds NAME until then); -1 */
	const char *by_host, *by_user;	/* forced: who removed it;
					 * superseded: the newer waiter */
	const char *by_cmd;	/* superseded: the newer waiter's command */
	const char *holder;	/* busy: the owner that held it */
	long by_pid;
};
/* Following a name's history (rl_log_read): the events after entry id
 * AFTER ("$": from now), waiting up to BLOCK_MS for the first (XREAD
 * BLOCK). */
struct rl_log_follow {
	const char *after;
	int64_t block_ms;
};
/* NAME's history from the first master that answers: with F NULL, its
 * last N events; else those F follows (N unread). Releases and losses
 * get their holder's host, pid, user, command, token and hold time from
 * its acquisition, and an acquisition never ended (its lease ran out) an
 * "expired" event where the next acquisition found it (id ""): the
 * scripts leave both out of the hot path. Oldest first into
 * *EV (malloc'd, *NEV of them, with their strings: free it).
 * RL_EWRONGTYPE when the history's key holds another type; RL_EAUTH when
 * the user may not read it (ACL). */
enum rl_err rl_log_read(rl_client *c, const char *name, int64_t n,
    const struct rl_log_follow *f, struct rl_event **ev, size_t *nev);
/* What the scripts leave out of a name's history, to keep its hot path
 * short, put back in EV (N events, oldest first, room for CAP): a
 * release's or a loss's host, pid, user, command, kind and token from its
 * owner's acquisition (of the same kind) before it, and how long it held
 * NAME (from one event's time to the other's); an "expired" event (at the
 * time of the acquisition that found it) for an acquisition not ended by
 * a release, removal or loss when a later one proves that it had ended:
 * an exclusive one (a plain lock's or a write) after any hold of another
 * owner, any after an exclusive hold of another owner, and any after a
 * hold of the same owner and kind (re-entries are not recorded). Read
 * holds and permits overlap: one after another proves nothing. The new
 * count. */
size_t rl_events_infer(struct rl_event *ev, size_t n, size_t cap);

/* Extend the lease now, blocking: one renewal of the lease keeper's
 * (below), the same round and the same verdict. *OURS is 0 when the
 * lock is gone or not ours. */
enum rl_err rl_renew(rl_client *c, const struct rl_lock *l, int64_t ttl_ms,
    int *ours);

/* What status found at NAME: a lock, or another kind of Redisson's. */
enum rl_kind {
	RL_KIND_LOCK,		/* a lock, or nothing */
	RL_KIND_RWLOCK,		/* RReadWriteLock: mode, writer, readers */
	RL_KIND_SEMAPHORE,	/* RSemaphore: a string of free permits */
	RL_KIND_EXPIRABLE	/* RPermitExpirableSemaphore: that, and a
				 * sorted set of permits taken */
};

struct redisReply;

struct rl_status {
	int held;
	size_t held_on;		/* several masters: nodes where OWNER holds it */
	size_t answered;	/* several masters: nodes that answered */
	int64_t waiting;	/* fair waiters queued, and plain ones in the
				 * room; a read-write lock's waiters too (the
				 * clients that listen on its channel) */
	int64_t pttl;		/* lease left, ms; -1 when no expiry */
	const char *owner;	/* read-write lock: the writer; NULL in read
				 * mode */
	int64_t holds;		/* read-write lock in read mode: all readers' */
	const char *host;	/* NULL when not recorded (Redisson holder) */
	long pid;		/* 0 when not recorded */
	const char *user;
	const char *cmd;
	int64_t since_ms;	/* server clock, ms since the epoch; -1 */
	int64_t fence;		/* -1 when not recorded */
	int64_t held_ms;	/* -1 when not recorded */
	int64_t held_until_ms;	/* the holder (the writer) finished, held
				 * until then (--min-hold; server clock, ms
				 * since the epoch); 0: not finished */
	struct rl_proc proc;	/* the holder's (the writer's) */
	enum rl_kind kind;
	const char *mode;	/* read-write lock: "read" or "write"; NULL */
	size_t readers;		/* read-write lock: rl_status_reader() */
	const char *writer;	/* read-write lock: the owner of the writer
				 * that waits first (it announced itself),
				 * or NULL */
	int64_t free;		/* semaphores (RL_EWRONGTYPE): permits free */
	int64_t taken;		/* expirable semaphore: permits taken... */
	size_t permits;		/* ...of which rl_status_permit() lists these */
	int64_t ours;		/* ...of which these have a holder record
				 * (redlock's holders) */
	const struct redisReply *list;	/* the readers or the permits */
	const char *badkey;
	const char *badtype;
};

/* One reader of a read-write lock, and its read holds. */
struct rl_reader {
	const char *owner;
	int64_t holds;
	int64_t pttl;		/* the longest lease left of its (last 100)
				 * read holds; -1 when none is left */
	const char *host;	/* NULL when not recorded (Redisson reader) */
	long pid;		/* 0 when not recorded */
	const char *user;
	const char *cmd;
	int64_t since_ms;	/* server clock, ms since the epoch; -1 */
	int64_t fence;		/* -1 when not recorded */
	int64_t held_until_ms;	/* finished (--min-hold): held until then */
	struct rl_proc proc;
};

/* One permit taken from an expirable semaphore. */
struct rl_permit {
	const char *id;		/* as Redisson shows it: hex digits */
	int64_t expires_ms;	/* server clock, ms since the epoch; -1: never */
	int64_t left_ms;	/* until then (< 0: expired, not yet returned) */
	const char *host;	/* its holder, when redlock took it; NULL */
	long pid;
	const char *user;
	const char *cmd;
	int64_t since_ms;	/* server clock, ms since the epoch; -1 */
	int64_t fence;		/* -1 when not recorded */
	const char *owner;	/* the owner token redlock recorded; NULL */
	int64_t held_until_ms;	/* finished (--min-hold): held until then */
	struct rl_proc proc;
};

/* One atomic read of the lock; strings valid until the next call. A
 * Redisson read-write lock is a held lock; a Redisson semaphore is
 * RL_EWRONGTYPE with ST->kind, ->free and its permits filled in. */
enum rl_err rl_status(rl_client *c, const char *name, struct rl_status *st);
/* Reader or permit I of ST (I < st->readers, st->permits): 0, or -1
 * when there is none. */
int rl_status_reader(const struct rl_status *st, size_t i,
    struct rl_reader *r);
int rl_status_permit(const struct rl_status *st, size_t i,
    struct rl_permit *p);

/* One entry of the queue command: the holder or a waiter. */
struct rl_qentry {
	const char *owner;
	int64_t ms;		/* holder: lease left (-1: none); waiter: until its
				 * deadline (INT64_MIN: none) */
	const char *host;	/* NULL when not recorded (Redisson) */
	long pid;
	const char *user;
	const char *cmd;
	int64_t age_ms;		/* held for / waiting for; -1 when unknown
				 * (since_ms elsewhere is an epoch) */
	int64_t held_until_ms;	/* holder: finished (--min-hold), held until
				 * then (server clock, epoch ms); else -1 */
	int64_t gives_up_ms;	/* waiter: until it gives up (its -w); -1:
				 * it waits for ever; INT64_MIN: unknown */
	struct rl_proc proc;	/* holder: where its process runs */
};

struct rl_queue {
	int held;
	struct rl_qentry holder;
	size_t n;
	struct rl_qentry *waiters;	/* head first; free with rl_queue_clear */
	int64_t unordered;	/* plain and --limit waiters, in no order */
	size_t nguests;
	struct rl_qentry *guests;	/* ...the first 100 of them, by their
					 * heartbeat's deadline; owner and
					 * since_ms, host, pid, user, cmd and
					 * gives_up_ms as recorded (unknown:
					 * their tokens only) */
	const char *mode;	/* a read-write lock's: "read" or "write";
				 * NULL for any other lock */
	int64_t readers;	/* read-write lock: how many readers hold it */
	int64_t rw_waiting;	/* ...how many wait (the clients that listen
				 * on its channel: readers and writers) */
	const char *writer;	/* ...the writer that waits first, or NULL */
	int64_t writer_ms;	/* ...its announcement's life left, ms */
	const char *badkey;
	const char *badtype;
};

/* The holder and the waiters of NAME, read atomically; strings are valid
 * until the next call on C. */
enum rl_err rl_queue(rl_client *c, const char *name, struct rl_queue *q);
void rl_queue_clear(struct rl_queue *q);

/* Call FN once for each name of a lock on any master, in order of name:
 * those with holder metadata, the semaphores with a permit taken and
 * every hash (SCAN, never KEYS; what each is, rl_status says); a name on
 * several masters once. A non-zero return stops. A master out of reach
 * is left out; an error only when all are. */
enum rl_err rl_scan(rl_client *c, int (*fn)(void *arg, const char *name),
    void *arg);

/* Lease arithmetic (Guarantee 2): renew every ttl/3; a lease confirmed by
 * a renewal sent at T is trusted locally until T + ttl - drift, with
 * drift = ttl/100 + 2 ms for clock rate differences and delivery. */
int64_t rl_renew_period_ms(int64_t ttl_ms);
/* A read hold or a permit is renewed at least this often, whatever its
 * lease: a Java reader's watchdog sets NAME's expiry to as little as
 * 10 s (rl_keeper.c). */
#define RL_SHARED_RENEW_MAX_MS 9000
/* How often the lease keeper renews a hold of KIND with a lease of
 * TTL_MS: rl_renew_period_ms, or the kind's heartbeat when shorter. */
int64_t rl_kind_renew_period_ms(enum rl_lock_kind kind, int64_t ttl_ms);
int64_t rl_drift_ms(int64_t ttl_ms);
int64_t rl_lease_deadline_ms(int64_t sent_ms, int64_t ttl_ms);

/* The lease keeper renews a held lock on its own schedule without
 * blocking its caller's poll loop: the caller polls what
 * rl_keeper_pollfds() gives and calls rl_keeper_step() when one is ready
 * or when rl_keeper_wake_ms() has come. A renewal is a round on every
 * master (connecting again after a failure is a step of it too), and no
 * step blocks. It never re-creates a lock that is gone. */
typedef struct rl_keeper rl_keeper;
struct pollfd;

enum rl_keep {
	RL_KEEP_OK,	/* held; renewals on schedule or being retried */
	RL_KEEP_GONE,	/* a renewal found the lock gone */
	RL_KEEP_TAKEN	/* ...held by another owner (on any master that
			 * refused the renewal) */
};

/* C is the keeper's own client; L the hold it renews (copied), renewed
 * at least every RL_SHARED_RENEW_MAX_MS when a read hold or a permit.
 * SENT_MS is when the acquisition was sent, on CLOCK_MONOTONIC. NULL
 * when out of memory, or L cannot be renewed on C (rl_lock). */
rl_keeper *rl_keeper_new(rl_client *c, const struct rl_lock *l,
    int64_t ttl_ms, int64_t sent_ms);
/* Fill PFD (room for RL_KEEPER_MAX_FDS) with what to poll: a renewal's
 * connections, and through Sentinel the subscriptions that hear a
 * failover announced; how many. */
#define RL_KEEPER_MAX_FDS 32
size_t rl_keeper_pollfds(const rl_keeper *k, struct pollfd *pfd);
int64_t rl_keeper_wake_ms(const rl_keeper *k);
/* Send time of the last confirmed renewal (or of the acquisition). */
int64_t rl_keeper_confirmed_ms(const rl_keeper *k);
/* Send time of the first renewal since that one, -1 when none was sent
 * yet: a deadline reached with none sent before it was missed by the
 * caller (stopped, starved of CPU), not for want of an answer. */
int64_t rl_keeper_tried_ms(const rl_keeper *k);
int64_t rl_keeper_deadline_ms(const rl_keeper *k);
/* Renewals confirmed so far. */
int64_t rl_keeper_renewals(const rl_keeper *k);
/* Do what is due at NOW, without blocking. An error return means this
 * renewal failed (the message is on the client) and will be retried;
 * *STATE says whether the lock is still ours. */
enum rl_err rl_keeper_step(rl_keeper *k, int64_t now, enum rl_keep *state);
/* Give up on a renewal in flight, so the connection is free for release
 * (its reply is dropped in order). */
void rl_keeper_settle(rl_keeper *k);
void rl_keeper_free(rl_keeper *k);

#endif
