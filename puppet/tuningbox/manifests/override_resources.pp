# @summary Applies Puppet resource overrides (spec 001) from tuningbox to the
#   catalog being compiled: updates the resources the data names and creates
#   the missing ones, by the rules of POST /api/v1/config/overrides/apply.
#
# Declare it once per catalog, anywhere in the manifest; it acts after every
# other resource (defined types and collectors included) is in the catalog.
#
# @param configuration
#   <type> => <title> => <parameters>. By default the deep merge of the Hiera
#   key `configuration` over the hierarchy (node over role over cluster).
# @param options
#   The `configuration_options`: create, types_filter, titles_filter,
#   types_create_exception, titles_create_exception, defaults. By default the
#   Hiera key `configuration_options`, each option from the most specific level.
# @param connection
#   How to reach tuningbox: uri (required when there is data), user, password,
#   ca_file, open_timeout, read_timeout; the same names as the Hiera backend's
#   options. By default the Hiera key `tuningbox::connection`.
#
# @example
#   class { 'tuningbox::override_resources': }
class tuningbox::override_resources (
  Hash $configuration = lookup('configuration', Hash, 'deep', {}),
  Hash $options = lookup('configuration_options', Hash, 'hash', {}),
  Hash[String, Data] $connection = lookup('tuningbox::connection', Hash[String, Data], 'hash', {}),
) {
  tuningbox::override_resources($configuration, $options, $connection)
}
