/*
 * One fake tool call, answered by the simulation's tool server
 * (tool_server.py): the program linked under every fake tool's name when a C
 * compiler was found.
 *
 * Starting Python and importing the fake tools for each of the ~300
 * tool calls of a scenario's hooks costs more CPU than the hooks' own
 * work. This program only hands its call to the server, which forks a
 * warm copy of itself to run it: the three standard streams (passed as
 * file descriptors, so a tool reads and writes exactly what it would
 * have), the working directory, argv and the environment. It exits with
 * the status the server's child sends back.
 *
 * Wire format: a 4-byte length (host order) sent with the descriptors,
 * then that many bytes: cwd, argc in decimal, each argument, each
 * environment entry, every one NUL-terminated. The answer: a 4-byte
 * exit status.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

static void append(char **buffer, size_t *used, size_t *size,
                   const char *text)
{
    size_t length = strlen(text) + 1;
    while (*used + length > *size) {
        *size *= 2;
        *buffer = realloc(*buffer, *size);
        if (!*buffer) {
            perror("fake tool client");
            exit(127);
        }
    }
    memcpy(*buffer + *used, text, length);
    *used += length;
}

static int send_descriptors(int sock, uint32_t length)
{
    int fds[3] = {0, 1, 2};
    char control[CMSG_SPACE(sizeof fds)];
    struct iovec part = {&length, sizeof length};
    struct msghdr message;
    struct cmsghdr *header;

    memset(&message, 0, sizeof message);
    memset(control, 0, sizeof control);
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(header), fds, sizeof fds);
    return sendmsg(sock, &message, 0) == (ssize_t)sizeof length ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *path = getenv("SIM_TOOL_SOCKET");
    struct sockaddr_un address;
    size_t used = 0, size = 65536, sent = 0;
    char *payload = malloc(size);
    char cwd[4096], count[16];
    int32_t status;
    ssize_t got;
    int sock, fd, i;

    if (!path || strlen(path) >= sizeof address.sun_path) {
        fprintf(stderr, "%s: SIM_TOOL_SOCKET names no tool server\n",
                argv[0]);
        return 127;
    }
    /* A closed standard stream is passed as /dev/null, as a process
       started with it closed would read and write nothing. */
    for (fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
            return 127;
    if (!payload || !getcwd(cwd, sizeof cwd)) {
        perror(argv[0]);
        return 127;
    }
    snprintf(count, sizeof count, "%d", argc);
    append(&payload, &used, &size, cwd);
    append(&payload, &used, &size, count);
    for (i = 0; i < argc; i++)
        append(&payload, &used, &size, argv[i]);
    for (i = 0; environ[i]; i++)
        append(&payload, &used, &size, environ[i]);

    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    strcpy(address.sun_path, path);
    sock = socket(AF_UNIX, SOCK_STREAM, 0);
    if (sock < 0 ||
        connect(sock, (struct sockaddr *)&address, sizeof address) < 0 ||
        send_descriptors(sock, (uint32_t)used) < 0) {
        perror(argv[0]);
        return 127;
    }
    while (sent < used) {
        got = write(sock, payload + sent, used - sent);
        if (got <= 0) {
            perror(argv[0]);
            return 127;
        }
        sent += (size_t)got;
    }
    used = 0;
    while (used < sizeof status) {
        got = read(sock, (char *)&status + used, sizeof status - used);
        if (got <= 0) {
            fprintf(stderr, "%s: the tool server gave no exit status\n",
                    argv[0]);
            return 1;
        }
        used += (size_t)got;
    }
    return status;
}
