/*
 * floor-uring: scripts/floor.c's client on io_uring, for scripts/bench-closed
 * (--uring-floor) to set beside the epoll floor. It answers one question: would
 * an io_uring transport lower a client's CPU per request on this machine?
 *
 * C connections, each with a send of its batch of P identical requests and a
 * recv queued on one ring; every completion that brings a batch's last reply
 * queues the connection's next send and recv. One io_uring_enter per round
 * submits everything queued and waits for the next completion, so a round of
 * many connections costs one system call instead of a send, a recv and a share
 * of an epoll_wait each. The ring is set up SINGLE_ISSUER | DEFER_TASKRUN (the
 * kernel's completion work runs inside that one call), sends post no completion
 * when they succeed (CQE_SKIP_SUCCESS); a kernel that refuses those flags gets
 * a plain ring. Like floor.c it parses nothing beyond byte counts and each
 * batch's first byte, and measures nothing. liburing (Debian's liburing-dev)
 * only sets up the ring and fills its entries.
 *
 * Usage: floor-uring -p PORT -c C -n N -P P -d SIZE -t get|set
 * Prints "GET: <rate> requests per second" like redis-benchmark -q.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RECV_BYTES (1 << 14) /* a longer batch of replies takes more than one recv */

static void die(const char *what) {
    fprintf(stderr, "floor-uring: %s%s%s\n", what, errno ? ": " : "", errno ? strerror(errno) : "");
    exit(1);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static struct io_uring ring;
static int *fd;
static long *got, *want;
static char *bufs, *batch;
static size_t req_len;
static long reply_len, total, sent;
static int pipeline;

static struct io_uring_sqe *sqe(void) {
    struct io_uring_sqe *s = io_uring_get_sqe(&ring);
    if (!s) die("submission queue full");
    return s;
}

/* Queues connection i's next batch (a send) and the recv for its replies. */
static void queue_batch(int i) {
    long n = total - sent < pipeline ? total - sent : pipeline;
    struct io_uring_sqe *s = sqe();
    io_uring_prep_send(s, fd[i], batch, req_len * n, MSG_WAITALL); /* all of it, or an error */
    s->user_data = (unsigned long)i << 1;
    s->flags |= IOSQE_CQE_SKIP_SUCCESS;
    want[i] = reply_len * n;
    sent += n;
    s = sqe();
    io_uring_prep_recv(s, fd[i], bufs + (size_t)RECV_BYTES * i, RECV_BYTES, 0);
    s->user_data = ((unsigned long)i << 1) | 1;
}

int main(int argc, char **argv) {
    int port = 0, conns = 50, size = 3, set = 0, opt;
    pipeline = 1;
    total = 100000;
    while ((opt = getopt(argc, argv, "p:c:n:P:d:t:")) != -1) {
        switch (opt) {
        case 'p': port = atoi(optarg); break;
        case 'c': conns = atoi(optarg); break;
        case 'n': total = atol(optarg); break;
        case 'P': pipeline = atoi(optarg); break;
        case 'd': size = atoi(optarg); break;
        case 't':
            if (strcmp(optarg, "get") && strcmp(optarg, "set")) die("-t: get or set");
            set = !strcmp(optarg, "set");
            break;
        default: die("usage: floor-uring -p PORT -c C -n N -P P -d SIZE -t get|set");
        }
    }
    if (port <= 0 || conns <= 0 || total <= 0 || pipeline <= 0 || size < 0) die("bad arguments");

    /* One request, then the batch; one reply's length (as floor.c). */
    char digits[16];
    snprintf(digits, sizeof digits, "%d", size);
    req_len = set ? (size_t)snprintf(NULL, 0, "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$%d\r\n", size) + size + 2
                  : strlen("*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n");
    batch = malloc(req_len * pipeline + 64);
    if (!batch) die("out of memory");
    for (int i = 0; i < pipeline; i++) {
        char *r = batch + req_len * i;
        if (set) {
            int h = sprintf(r, "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$%d\r\n", size);
            memset(r + h, 'x', size);
            memcpy(r + h + size, "\r\n", 2);
        } else {
            memcpy(r, "*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n", req_len);
        }
    }
    reply_len = set ? 5 : (long)(1 + strlen(digits) + 2 + size + 2);
    char first = set ? '+' : '$';

    /* Two entries per connection in flight at most; the ring holds a round of them all. */
    unsigned entries = 64;
    while (entries < 2u * (unsigned)conns) entries *= 2;
    int err = io_uring_queue_init(entries, &ring, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
    if (err == -EINVAL) err = io_uring_queue_init(entries, &ring, 0);
    if (err) {
        errno = -err;
        die("io_uring_queue_init");
    }
    fd = calloc(conns, sizeof *fd);
    got = calloc(conns, sizeof *got);
    want = calloc(conns, sizeof *want);
    bufs = malloc((size_t)RECV_BYTES * conns);
    if (!fd || !got || !want || !bufs) die("setup");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    for (int i = 0; i < conns; i++) {
        int one = 1;
        fd[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (fd[i] < 0 || connect(fd[i], (struct sockaddr *)&addr, sizeof addr)) die("connect");
        setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }

    /* Batches are whole: the last connections to start may send fewer than P. */
    long done = 0;
    double start = now_s();
    for (int i = 0; i < conns && sent < total; i++) queue_batch(i);
    while (done < total) {
        struct __kernel_timespec ten_s = {.tv_sec = 10};
        struct io_uring_cqe *cqe;
        int r = io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ten_s, NULL);
        if (r == -EINTR) continue;
        if (r == -ETIME) die("no reply for 10 s");
        if (r < 0) {
            errno = -r;
            die("io_uring_submit_and_wait_timeout");
        }
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            seen++;
            int i = (int)(cqe->user_data >> 1);
            if (!(cqe->user_data & 1)) { /* only a failed send posts a completion */
                errno = -cqe->res;
                die("send");
            }
            if (cqe->res <= 0) {
                errno = cqe->res < 0 ? -cqe->res : 0;
                die("recv (connection closed?)");
            }
            char *buf = bufs + (size_t)RECV_BYTES * i;
            if (got[i] == 0 && buf[0] != first) {
                errno = 0;
                fprintf(stderr, "floor-uring: unexpected reply: %.*s\n", cqe->res < 80 ? cqe->res : 80, buf);
                exit(1);
            }
            got[i] += cqe->res;
            if (got[i] > want[i]) die("more reply bytes than asked for");
            if (got[i] < want[i]) {
                struct io_uring_sqe *s = sqe();
                io_uring_prep_recv(s, fd[i], buf, RECV_BYTES, 0);
                s->user_data = ((unsigned long)i << 1) | 1;
                continue;
            }
            done += want[i] / reply_len;
            got[i] = 0;
            if (sent < total) queue_batch(i);
        }
        io_uring_cq_advance(&ring, seen);
    }
    double secs = now_s() - start;
    printf("%s: %.2f requests per second\n", set ? "SET" : "GET", total / secs);
    return 0;
}
