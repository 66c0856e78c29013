# frozen_string_literal: true

require_relative '../../../puppet_x/tuningbox/override_plan'

# tuningbox::override_resources(configuration, options, connection) arranges
# for the override data to be applied to the catalog being compiled once every
# other resource is in it; the class tuningbox::override_resources calls it
# with the data from Hiera. See the module's README.
Puppet::Functions.create_function(:'tuningbox::override_resources', Puppet::Functions::InternalFunction) do
  dispatch :override_resources do
    scope_param
    param 'Hash', :configuration
    param 'Hash', :options
    param 'Hash', :connection
  end

  def override_resources(scope, configuration, options, connection)
    return nil if configuration.empty?

    PuppetX::Tuningbox::OverridePlan.defer(scope, configuration, options, connection)
    nil
  rescue PuppetX::Tuningbox::OverridePlan::Error => e
    raise Puppet::ParseError, "tuningbox::override_resources: #{e.message}"
  end
end
