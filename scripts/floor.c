/*
 * floor: the least a closed-loop client can cost on this machine, for
 * scripts/bench-closed to set beside the real tools.
 *
 * C connections, each writing a batch of P identical requests in one send()
 * and reading the replies with one recv() per readiness event (level-triggered
 * epoll, registered once), the next batch sent when P replies' bytes are in.
 * It parses nothing beyond counting bytes (every reply of a run has the same
 * length) and checking each batch's first byte, and measures nothing: what it
 * costs per request is the kernel's loopback path plus a few instructions.
 * Written in C, with no library, so nothing stands between it and the calls.
 *
 * Usage: floor -p PORT -c C -n N -P P -d SIZE -t get|set
 * Prints "GET: <rate> requests per second" like redis-benchmark -q.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
    fprintf(stderr, "floor: %s%s%s\n", what, errno ? ": " : "", errno ? strerror(errno) : "");
    exit(1);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    int port = 0, conns = 50, pipeline = 1, size = 3, set = 0, opt;
    long total = 100000;
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
        default: die("usage: floor -p PORT -c C -n N -P P -d SIZE -t get|set");
        }
    }
    if (port <= 0 || conns <= 0 || total <= 0 || pipeline <= 0 || size < 0) die("bad arguments");

    /* One request, then the batch; one reply's length. */
    char digits[16];
    snprintf(digits, sizeof digits, "%d", size);
    size_t req_len = set ? (size_t)snprintf(NULL, 0, "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$%d\r\n", size) + size + 2
                         : strlen("*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n");
    char *batch = malloc(req_len * pipeline + 64);
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
    long reply_len = set ? 5 : (long)(1 + strlen(digits) + 2 + size + 2);
    char first = set ? '+' : '$';

    int *fd = calloc(conns, sizeof *fd);
    long *got = calloc(conns, sizeof *got);
    char *buf = malloc(1 << 16);
    struct epoll_event *events = calloc(conns, sizeof *events);
    int ep = epoll_create1(0);
    if (!fd || !got || !buf || !events || ep < 0) die("setup");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    for (int i = 0; i < conns; i++) {
        int one = 1;
        fd[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (fd[i] < 0 || connect(fd[i], (struct sockaddr *)&addr, sizeof addr)) die("connect");
        setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(fd[i], F_SETFL, O_NONBLOCK);
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = (unsigned)i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &e)) die("epoll_ctl");
    }

    /* Batches are whole: the last connections to start may send fewer than P. */
    long sent = 0, done = 0;
    long *want = calloc(conns, sizeof *want);
    if (!want) die("setup");
    double start = now_s();
    for (int i = 0; i < conns && sent < total; i++) {
        long n = total - sent < pipeline ? total - sent : pipeline;
        if (send(fd[i], batch, req_len * n, 0) != (ssize_t)(req_len * n)) die("send");
        want[i] = reply_len * n;
        sent += n;
    }
    while (done < total) {
        int n = epoll_wait(ep, events, conns, 10000);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die(n == 0 ? "no reply for 10 s" : "epoll_wait");
        for (int k = 0; k < n; k++) {
            int i = (int)events[k].data.u32;
            ssize_t r = recv(fd[i], buf, 1 << 16, 0);
            if (r < 0 && errno == EAGAIN) continue;
            if (r <= 0) die("recv (connection closed?)");
            if (got[i] == 0 && buf[0] != first) {
                errno = 0;
                fprintf(stderr, "floor: unexpected reply: %.*s\n", (int)(r < 80 ? r : 80), buf);
                exit(1);
            }
            got[i] += r;
            if (got[i] < want[i]) continue;
            if (got[i] > want[i]) die("more reply bytes than asked for");
            done += want[i] / reply_len;
            got[i] = 0;
            if (sent < total) {
                long m = total - sent < pipeline ? total - sent : pipeline;
                if (send(fd[i], batch, req_len * m, 0) != (ssize_t)(req_len * m)) die("send");
                want[i] = reply_len * m;
                sent += m;
            }
        }
    }
    double secs = now_s() - start;
    printf("%s: %.2f requests per second\n", set ? "SET" : "GET", total / secs);
    return 0;
}
