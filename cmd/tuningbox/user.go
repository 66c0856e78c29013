package main

import (
	"bufio"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

var userColumns = []string{"name", "role", "node", "created_at"}

func newUserCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Manage user accounts (admins only)",
		Long: `Manage the accounts that may use the API. Roles: admin (read and write,
users and tokens), observer (read only), node (reads only its own node's
configuration; --node names the node by id, UUID or FQDN).`,
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newUserCreateCmd(), newUserListCmd(), newUserDeleteCmd())
	return cmd
}

func newUserCreateCmd() *cobra.Command {
	var (
		role, node, dataDir string
		passwordStdin       bool
	)
	cmd := &cobra.Command{
		Use:   "create NAME --role ROLE [--node REF] [--password-stdin] [--data DIR]",
		Short: "Create a user",
		Long: `Create a user. The password comes from the first line of standard input with
--password-stdin, otherwise from TUNINGBOX_NEW_PASSWORD (never from a flag,
which would show in process lists).

With --data DIR the user is written straight into the embedded store in DIR,
without a server: the way to create the first administrator. The server must
not be running on that directory meanwhile.`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			password, err := newPassword(cmd.InOrStdin(), passwordStdin)
			if err != nil {
				return err
			}
			in := auth.NewUser{Name: args[0], Password: password, Role: auth.Role(role), Node: node}
			if dataDir != "" {
				return createUserOffline(cmd, dataDir, in)
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			if ident.IsIntegerID(node) { // from 1.2 on the API takes the node's UUID or FQDN
				if node, err = nodeRef(cmd.Context(), c, node); err != nil {
					return err
				}
			}
			u, err := c.CreateUser(cmd.Context(), client.NewUser{Name: in.Name, Password: in.Password, Role: role, Node: node})
			if err != nil {
				return err
			}
			return renderObject(cmd.OutOrStdout(), formatTable, toObject(u), userColumns)
		},
	}
	f := cmd.Flags()
	f.StringVar(&role, "role", "", "admin, observer or node")
	f.StringVar(&node, "node", "", "the node (id, UUID or FQDN) of a node user")
	f.BoolVar(&passwordStdin, "password-stdin", false, "read the password from the first line of standard input")
	f.StringVar(&dataDir, "data", "", "write into the embedded store in this directory instead of calling the API")
	_ = cmd.MarkFlagRequired("role")
	return cmd
}

// newPassword reads the new user's password from stdin or the environment.
func newPassword(stdin io.Reader, fromStdin bool) (string, error) {
	if !fromStdin {
		if p := os.Getenv("TUNINGBOX_NEW_PASSWORD"); p != "" {
			return p, nil
		}
		return "", usagef("give the password on standard input with --password-stdin, or in TUNINGBOX_NEW_PASSWORD")
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	password := strings.TrimRight(line, "\r\n")
	if password == "" {
		return "", usagef("standard input holds no password")
	}
	return password, nil
}

func createUserOffline(cmd *cobra.Command, dataDir string, in auth.NewUser) error {
	backend, err := bolt.Open(dataDir)
	if err != nil {
		return err
	}
	defer backend.Close()
	u, err := auth.NewService(backend.Index).CreateUser(cmd.Context(), in)
	if err != nil {
		return err
	}
	return renderObject(cmd.OutOrStdout(), formatTable, map[string]any{
		"name": u.Name, "role": string(u.Role), "node": u.Node, "created_at": u.CreatedAt,
	}, userColumns)
}

func newUserListCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List users",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listObjects(cmd, format, userColumns, func(c *client.Client) (any, error) { return c.Users(cmd.Context()) })
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

func newUserDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a user and revoke its tokens",
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			return c.DeleteUser(cmd.Context(), args[0])
		},
	}
}
